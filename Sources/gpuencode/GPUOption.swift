import ArgumentParser
import GPUEncodeKit
import Glibc

/// `--gpu`, else `GPUENCODE_GPU`, else auto; a bad value is a usage error naming where it came from.
func resolveGPU(_ option: String?) throws -> GPUSelection {
    let fromEnvironment = getenv("GPUENCODE_GPU").map { String(cString: $0) }
    let name = option ?? fromEnvironment ?? "auto"
    guard let selection = GPUSelection(rawValue: name) else {
        throw GPUEncodeError(.usage, "\(option != nil ? "--gpu" : "GPUENCODE_GPU")=\(name) must be auto, hardware or software")
    }
    return selection
}

/// `--gpu`, declared once for every command that makes a GL context (transcode, batch, preview,
/// contact-sheet, validate).
struct GPUOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Which GPU renders: auto, hardware or software (env GPUENCODE_GPU).", valueName: "auto|hardware|software"),
            completion: .list(GPUSelection.allCases.map(\.rawValue)))
    var gpu: String?

    func validate() throws {
        if let gpu, GPUSelection(rawValue: gpu) == nil { throw ValidationError("--gpu must be auto, hardware or software") }
    }

    /// `--gpu`, else `GPUENCODE_GPU`, else auto.
    func selection() throws -> GPUSelection { try resolveGPU(gpu) }
}
