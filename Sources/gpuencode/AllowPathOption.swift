import ArgumentParser
import GPUEncodeKit

/// `--allow-path DIR`, shared by every command that loads presets: a preset reads files (LUTs,
/// images, curves, shaders, videos, `extends`) only under its own folder, or under these.
struct AllowPathOptions: ParsableArguments {
    @Option(name: .customLong("allow-path"), help: ArgumentHelp("Let presets read files under DIR as well as under their own folder (symlinks are followed before the check); repeatable.", valueName: "dir"))
    var allowPaths: [String] = []

    /// The folders, checked (a missing one is a usage error, 64).
    func allowed() throws -> AllowedPaths { try AllowedPaths(allowPaths) }
}
