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
