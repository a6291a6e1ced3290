import ArgumentParser
import GPUEncodeKit
import Glibc

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpuencode preview",
        abstract: "Render one filtered frame of a movie (or a still image) to a PNG or JPEG.",
        discussion: """
        The frame goes through exactly what a transcode does to it (colour conversion, rotation, the
        preset's filters), so the picture is what the video will look like.

        EXAMPLES:
          gpuencode preview in.mp4 --preset sepia -o sepia.png
          gpuencode preview in.mp4 --preset ./look.json --at 12.5 -o look.jpg
          gpuencode preview photo.jpg --preset toaster -o toaster.png
        """
    )

    @Argument(help: "A movie, or a PNG/JPEG still image.")
    var input: String

    @Option(name: .long, help: ArgumentHelp("A built-in preset name or a path to a preset JSON file.", valueName: "name|file"))
    var preset: String = "identity"

    @Option(help: ArgumentHelp("Time of the frame in seconds from the start (the first frame at or after it).", valueName: "seconds"))
    var at: Double = 0

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The picture to write: .png or .jpg.", valueName: "file"))
    var output: String

    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists.")
    var overwrite = false

    @Option(help: ArgumentHelp("Which GPU renders: auto, hardware or software (env GPUENCODE_GPU).", valueName: "auto|hardware|software"))
    var gpu: String?

    @Flag(name: .shortAndLong, help: "Print the frame time and the renderer.")
    var verbose = false

    func validate() throws {
        guard at >= 0 else { throw ValidationError("--at must not be negative") }
        guard ImageIO.isImagePath(output) else { throw ValidationError("-o must name a .png or .jpg file") }
        if let gpu, GPUSelection(rawValue: gpu) == nil { throw ValidationError("--gpu must be auto, hardware or software") }
    }

    func run() throws {
        MediaLog.setLevel(verbose: verbose)
        do {
            let gpuName = gpu ?? getenv("GPUENCODE_GPU").map { String(cString: $0) } ?? "auto"
            guard let selection = GPUSelection(rawValue: gpuName) else {
                throw GPUEncodeError(.usage, "GPUENCODE_GPU=\(gpuName) must be auto, hardware or software")
            }
            if !overwrite && access(output, F_OK) == 0 { throw GPUEncodeError(.outputCreate, path: output, "already exists (use -y to overwrite)") }
            let preset = try Preset.load(self.preset)
            let result = try Preview.render(input: input, preset: preset, at: at, gpu: selection)
            try ImageIO.write(result.image, to: output, overwrite: overwrite)
            if verbose {
                let when = result.time.map { "frame at \(String(Double(Int($0 * 1000)) / 1000)) s" } ?? "still image"
                fputs("gpuencode: wrote \(output): \(result.image.width)x\(result.image.height), \(when), preset \(preset.name), \(result.renderer)\n", stderr)
            }
        } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
        }
    }
}
