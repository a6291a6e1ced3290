import ArgumentParser
import Glibc
import GPUEncodeKit

struct LutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpuencode lut",
        abstract: "Make lookup tables for the lookup filter.",
        discussion: """
        EXAMPLES:
          gpuencode lut identity lookup.png    a 512x512 GPUImage lookup image that changes nothing

        Open the image in an image editor, apply colour adjustments to the whole image (curves,
        levels, hue: anything that treats each pixel alone), save it as PNG and use it with
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
    }

    func run() throws {
        fputs("gpuencode: error: lut identity is not available in this build\n", stderr)
        throw ExitCode(64)
    }
}
