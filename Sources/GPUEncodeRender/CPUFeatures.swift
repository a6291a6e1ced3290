import Foundation

/// What this machine's CPU can run of `GPUEncodeCPUKernels`, which is compiled for Haswell's
/// instruction set on x86-64 (AVX2, FMA, and the BMI, F16C, MOVBE and LZCNT instructions LLVM may
/// use for that target): entering it on an older CPU would stop the process on an illegal
/// instruction, so the compiler plans CPU kernels only where `hasVectorKernels` is true.
public enum CPUFeatures {
    /// The flags Haswell code may need, as /proc/cpuinfo names them.
    static let haswellFlags: Set<String> = ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm", "popcnt"]

    /// Whether the CPU kernels may run here: on x86-64 when every flag Haswell code may need is in
    /// /proc/cpuinfo (read on each call: a renderer asks once); elsewhere the kernels are built
    /// for the default target and always may.
    public static func hasVectorKernels() -> Bool {
        #if arch(x86_64)
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return false }
        return flags(inCPUInfo: text).isSuperset(of: haswellFlags)
        #else
        return true
        #endif
    }

    /// How many bands a CPU kernel's frame is split into, one thread each: the cores this process
    /// may run on, at most 8. why: the encoder's threads and the kernel share the cores, and on a
    /// 2-core machine one band left 1977's kernel (19.6 ms a 1080p frame) as the pipeline's slowest
    /// stage: two bands took the transcode from 7.26-7.41 s to 6.57-6.68 (3 interleaved rounds),
    /// sepia's (4.3 ms) the same either way.
    public static func kernelBands() -> Int {
        min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
    }

    /// The first processor's flags in /proc/cpuinfo's text.
    static func flags(inCPUInfo text: String) -> Set<String> {
        for line in text.split(separator: "\n") where line.hasPrefix("flags") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return Set(line[line.index(after: colon)...].split(separator: " ").map(String.init))
        }
        return []
    }
}
