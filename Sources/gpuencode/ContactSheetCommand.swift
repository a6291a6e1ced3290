import ArgumentParser
import CShim
import GPUEncodeKit
import Glibc

struct ContactSheetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contact-sheet",
        abstract: "Show one frame through many presets in a labelled grid, to pick a look.",
        usage: "gpuencode contact-sheet <input> -o <file> [--presets <a,b,c>] [<options>]",
        discussion: """
        Each tile is the frame through one preset, rendered at the frame's full size exactly as a \
        transcode or preview renders it, then shrunk to the tile on the GPU and labelled with the \
        preset's name. Tiles go left to right, top to bottom, in the order given. Without --presets \
        every built-in preset is shown except none (the same picture as identity).

        The sheet is columns x tile-width plus a gap around and between the tiles wide; tiles keep \
        the frame's aspect ratio (their height rounded to an even number).

        EXAMPLES:
          gpuencode contact-sheet in.mp4 --at 12 -o looks.jpg
          gpuencode contact-sheet photo.jpg --presets identity,sepia,noir,./mine.json --columns 2 -o pick.png
          gpuencode contact-sheet in.mp4 --tile-width 480 --columns 4 -o big.png
        """
    )

    @Argument(help: "A movie, or a PNG/JPEG still image.")
    var input: String

    @Option(name: .customLong("preset-dir"), help: ArgumentHelp("Also look for presets in this folder (repeatable).", valueName: "dir"))
    var presetDirs: [String] = []

    @Option(help: ArgumentHelp("Time of the frame in seconds from the start (the first frame at or after it). Default: 10% of the way into the video, a more typical frame than the first, which is often black (the first frame when the length is unknown).", valueName: "seconds"))
    var at: Double?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The sheet to write: .png or .jpg.", valueName: "file"))
    var output: String

    @Option(help: ArgumentHelp("Comma-separated built-in preset names or preset files (default: every built-in preset but none).", valueName: "a,b,c"))
    var presets: String?

    @Option(help: ArgumentHelp("Tiles per row (default: a near-square grid).", valueName: "n"))
    var columns: Int?

    @Option(name: .customLong("tile-width"), help: ArgumentHelp("Width of each tile in pixels (16...4096).", valueName: "pixels"))
    var tileWidth: Int = 320

    @Option(help: ArgumentHelp("Pixels between the tiles and around the grid (0...256).", valueName: "pixels"))
    var gap: Int = 4

    @Flag(name: [.customShort("y"), .customLong("overwrite")], help: "Overwrite the output if it exists.")
    var overwrite = false

    @OptionGroup var gpuOptions: GPUOptions

    @Flag(name: .shortAndLong, help: "Print each preset as its tile is done, and the renderer.")
    var verbose = false

    func validate() throws {
        if let at, !Preview.timeRange.contains(at) {
            throw ValidationError("--at must be a time from 0 to \(roundedSeconds(Preview.timeRange.upperBound, places: 0)) seconds")
        }
        guard ImageIO.isImagePath(output) else { throw ValidationError("-o must name a .png or .jpg file") }
        if let columns, columns < 1 { throw ValidationError("--columns must be at least 1") }
        guard (16...4096).contains(tileWidth) else { throw ValidationError("--tile-width must be between 16 and 4096") }
        guard (0...256).contains(gap) else { throw ValidationError("--gap must be between 0 and 256") }
        if let presets, presetList(presets).isEmpty { throw ValidationError("--presets lists no preset") }
    }

    @OptionGroup(title: "Files presets may read") var readAccess: AllowPathOptions

    func presetList(_ text: String) -> [String] {
        text.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
    }

    func run() throws {
        MediaLog.setLevel(verbose: verbose)
        do {
            let selection = try gpuOptions.selection()
            if !overwrite && access(output, F_OK) == 0 { throw GPUEncodeError(.outputCreate, path: output, "already exists (use -y to overwrite)") }
            // Every preset is loaded (and checked) before any rendering starts.
            let library = PresetLibrary(commandLine: presetDirs, allowed: try readAccess.allowed())
            let list = try (presets.map(presetList) ?? ContactSheet.defaultPresets).map { try library.load($0) }
            let session = try Preview.Session(input: input, at: at, gpu: selection)
            let verbose = self.verbose
            let (sheet, layout) = try ContactSheet.render(session, presets: list, columns: columns, tileWidth: tileWidth, gap: gap) { name in
                if verbose { fputs("gpuencode: tile \(name)\n", stderr) }
            }
            // From here until the picture is in place, SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ remove the
            // temporary and exit 128+signal instead of leaving it (before, the default action is harmless).
            gpuencode_install_signal_handlers()
            try ImageIO.write(sheet, to: output, overwrite: overwrite, stopIfInterrupted: true)
            if verbose {
                let when = session.time.map { "frame at \(roundedSeconds($0, places: 3)) s" } ?? "still image"
                fputs("gpuencode: wrote \(output): \(sheet.width)x\(sheet.height), \(list.count) presets in \(layout.columns)x\(layout.rows) tiles of \(layout.tileWidth)x\(layout.tileHeight), \(when), \(session.renderer)\n", stderr)
            }
        } catch let error as GPUEncodeError {
            fputs("gpuencode: error: \(error.description)\n", stderr)
            throw ExitCode(error.exitCode)
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " { s = s.dropFirst() }
        while let l = s.last, l == " " { s = s.dropLast() }
        return String(s)
    }
}
