import Glibc
import GPUEncodeKit

/// The environment variables the command line reads. The library reads none: what they set
/// reaches it as options.
enum Environment {
    static func value(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// `$XDG_CONFIG_HOME/gpuencode/presets`, by default `~/.config/gpuencode/presets`.
    static var userPresetDirectory: String? { PresetLibrary.userDirectory(environment: value) }

    /// For measuring (bench/h100.sh): GPUENCODE_TRANSFER=pbo|client forces pixel buffer objects or
    /// client memory (anything else: the renderer's choice), GPUENCODE_COPY_THREADS=N (1...16) the
    /// threads that copy through mapped buffers.
    static var transfer: TransferOptions {
        TransferOptions(mode: value("GPUENCODE_TRANSFER").flatMap(TransferOptions.Mode.init(rawValue:)) ?? .auto,
                        copyThreads: value("GPUENCODE_COPY_THREADS").flatMap { Int($0) }.flatMap { $0 >= 1 ? $0 : nil })
    }

    /// GPUENCODE_SYNC set: `--benchmark-filters` without overlapping a frame's readback with the next.
    static var synchronousBenchmark: Bool { value("GPUENCODE_SYNC") != nil }
}

extension PresetLibrary {
    /// The `--preset-dir` folders, then the user's folder (from the environment), then the built-ins.
    init(commandLine presetDirectories: [String], allowed: AllowedPaths) {
        self.init(presetDirectories: presetDirectories, userDirectory: Environment.userPresetDirectory, allowed: allowed)
    }
}
