import ArgumentParser
import GPUEncodeKit

/// `--filter` / `-vf`: inline filters after the preset, shared by the transcode, `preview` and
/// `batch`. The string is read into the same filters a preset's chain builds (InlineFilter), so it
/// has the preset checks and errors, exit 67.
struct FilterOptions: ParsableArguments {
    static let help = """
        Filters run after the preset's, written as in ffmpeg's -vf: NAME:KEY=VALUE:..., filters separated by \
        commas, e.g. 'sepia:intensity=0.5,vignette:end=0.9' (also sepia=0.5: bare values set the parameters in \
        the order `gpuencode filters NAME` lists them). Quote a value holding , or : with '...' or escape it \
        with \\; rgb(...), [...] and {...} keep theirs. Checked as a preset is (exit 67, pointing at the column); \
        files resolve from the working directory.
        """

    @Option(name: [.customLong("filter"), .customLong("vf", withSingleDash: true)], help: ArgumentHelp(help, valueName: "filters"))
    var filter: String?

    /// `preset` with the inline filters after its chain (unchanged without --filter).
    func apply(to preset: Preset, allowed: AllowedPaths) throws -> Preset {
        guard let filter else { return preset }
        return try preset.appending(InlineFilter.parse(filter, origin: "--filter", baseDirectory: absolutePath("."), allowed: allowed))
    }
}
