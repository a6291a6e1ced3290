import ArgumentParser
import CShim
import Glibc
import GPUEncodeKit

struct LutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lut",
        abstract: "Make lookup tables for the lookup filter.",
        discussion: """
        EXAMPLES:
          gpuencode lut identity lookup.png    a 512x512 GPUImage lookup image that changes nothing

        Open the image in an image editor, apply colour adjustments to the whole image (curves, \
        levels, hue: anything that treats each pixel alone), save it as PNG and use it with \
        {"filter": "lookup", "image": "lookup.png"}.
        """
    )

    @Argument(help: "What to make: identity.")
    var kind: String

    @Argument(help: "The PNG to write.")
    var output: String

    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists.")
    var overwrite = false

    func validate() throws {
        guard kind == "identity" else { throw ValidationError("unknown lut kind \"\(kind)\"; use identity") }
        // JPEG would blur the table; the lookup filter reads PNG only.
        guard output.lowercased().hasSuffix(".png") else { throw ValidationError("the lookup image must be a .png file") }
    }

    func run() throws {
        do {
            gpuencode_install_signal_handlers()
            try ImageIO.write(LookupImage.identity(), to: output, overwrite: overwrite, stopIfInterrupted: true)
        } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
        }
        fputs("gpuencode: wrote \(output): a 512x512 identity lookup image\n", stderr)
    }
}
