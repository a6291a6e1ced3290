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
    /// threads that copy through mapped buffers, GPUENCODE_MAPPING=mapped|persistent how those
    /// buffers are mapped, GPUENCODE_DEPTH=N (2...4) the frames in flight, GPUENCODE_COMPUTE=1|0 the
    /// single-pass shader as compute or fragment (unset: compute on hardware GPUs).
    static var transfer: TransferOptions {
        TransferOptions(mode: value("GPUENCODE_TRANSFER").flatMap(TransferOptions.Mode.init(rawValue:)) ?? .auto,
                        copyThreads: value("GPUENCODE_COPY_THREADS").flatMap { Int($0) }.flatMap { $0 >= 1 ? $0 : nil },
                        mapping: value("GPUENCODE_MAPPING").flatMap(TransferOptions.Mapping.init(rawValue:)) ?? .auto,
                        depth: value("GPUENCODE_DEPTH").flatMap { Int($0) },
                        computePass: value("GPUENCODE_COMPUTE").map { $0 != "0" })
    }

    /// For measuring (bench/batch.sh): GPUENCODE_SHARED_GL=1|0 makes a batch's jobs share one GL
    /// context or each make their own (unset: shared on hardware GPUs).
    static var sharedBatchContext: Bool? { value("GPUENCODE_SHARED_GL").map { $0 != "0" } }

    /// For measuring (bench/hwaccel.sh): GPUENCODE_CUDA_INTEROP=0 downloads NVDEC frames to system
    /// memory instead of copying them into the GL textures on the GPU (unset or 1: interop).
    static var cudaInterop: Bool { value("GPUENCODE_CUDA_INTEROP") != "0" }

    /// For measuring and testing: GPUENCODE_CPU_KERNELS=0 keeps every step of the plan on the
    /// renderer (no CPU kernel, whatever the cost model prefers).
    static var cpuKernels: Bool { value("GPUENCODE_CPU_KERNELS") != "0" }

    /// GPUENCODE_STAGES set: `--benchmark-filters` also prints each stage's GPU and CPU time.
    static var stageTimes: Bool { value("GPUENCODE_STAGES") != nil }

    /// GPUENCODE_SYNC set: `--benchmark-filters` without overlapping a frame's readback with the next.
    static var synchronousBenchmark: Bool { value("GPUENCODE_SYNC") != nil }
}

extension PresetLibrary {
    /// The `--preset-dir` folders, then the user's folder (from the environment), then the built-ins.
    init(commandLine presetDirectories: [String], allowed: AllowedPaths) {
        self.init(presetDirectories: presetDirectories, userDirectory: Environment.userPresetDirectory, allowed: allowed)
    }
}
