import CEGL
import Glibc

/// What work costs on the renderer at hand, in rough units the passes compare plans with. Both
/// renderers run the same compiler; where the best plan differs, it differs here and nowhere else.
/// A software rasteriser (Mesa's llvmpipe) runs every fragment on the CPU: it pays per fragment
/// shaded and per texel fetched, while a pass or a transfer costs little more than a memcpy it
/// would do anyway. A GPU shades fragments nearly for free and pays per pass (a full round trip
/// through memory, a launch) and per transfer between host and device.
public struct CostModel: Sendable, Equatable, CustomStringConvertible {
    public enum Renderer: String, Sendable {
        case software, hardware
    }

    public var renderer: Renderer
    /// Cost of shading one fragment (fixed part, before its fetches and arithmetic).
    public var perFragment: Double
    /// Cost of one texel fetch in a shader.
    public var perFetch: Double
    /// Cost of one arithmetic instruction in a shader.
    public var perInstruction: Double
    /// Cost of one pass (a draw into its own target), whatever its size.
    public var perPass: Double
    /// Cost of one byte moved between host memory and the renderer's memory.
    public var perTransferByte: Double
    /// Plans timed against the reference plan on this renderer, as time over the reference's, where
    /// counting fetches and instructions cannot tell (a GPU's occupancy, its texture caches).
    public var measured: [MeasuredPlan: Double] = [:]
    /// Cost (ns, one core) of one evaluation of a chain by the CPU kernels (`PointChainKernels`):
    /// a fixed part (the source's conversion, the output's rows, loads and stores), each affine
    /// filter, each table lookup (eight scalar gathers a channel). Measured on llvmpipe's machine
    /// (AVX2, 1080p `--benchmark-filters`): sepia 4.3-4.9 ms a frame over 2.6 M evaluations, faded
    /// (three maps) 10.1, 1977 (three maps and a curve, the reference's 3.1 M) 21.7: 0.8 ns, 1.0 a map,
    /// 3.0 a lookup, given here in the software model's units, which put llvmpipe's passes at 0.61-0.74
    /// of the CPU time they measure (the block pass's 1080p sepia: 9.8 ms against 16; plane-native
    /// 7.4 against 10): times 0.65. nil: this machine cannot run them (`CPUFeatures`). The CPU is the
    /// CPU whichever renderer draws, so both models carry it.
    public var hostEvaluation: HostCost? = HostCost(base: 0.5, perFilter: 0.65, perLookup: 2.0, perBlurTap: 0.033, perBlurSample: 0.38)

    public struct HostCost: Sendable, Equatable {
        public var base: Double
        public var perFilter: Double
        public var perLookup: Double
        /// The blur kernel (`GridBlurKernel`): each tap of each sample it blurs down or across
        /// the grid, and each output sample it interpolates. Measured (1080p sigma 8, one core,
        /// `--benchmark-filters`, perf's split): 4.4 ms a frame, 2.6 of it in the 52 M taps, 1.8 in
        /// the 3.1 M samples: 0.05 ns and 0.58, times 0.65 as above. (Four sums a step since: 3.9-4.0
        /// ms; the estimate only has to rank the kernel against llvmpipe's 15 ms.)
        public var perBlurTap: Double
        public var perBlurSample: Double
    }

    public enum MeasuredPlan: String, Sendable {
        /// The blur on planes (`PlaneBlur`) against the RGBA chain's blur, 1080p sigma 8.
        case planeBlur
    }

    /// Nanoseconds of CPU on llvmpipe (LLVM 15, 256-bit vectors): a fragment lane's arithmetic
    /// instruction about 0.05 ns, a texel fetch (a gather) ten times that, a fragment's fixed
    /// cost (rasterising, its tile) about 2 ns, a pass 20 µs. The packed 1080p sepia pass (259,200
    /// fragments, 12 fetches and about 600 instructions each) comes out at 9.8 ms; measured: 16 ms
    /// of CPU over the two cores, 89% of it in the JIT'd shader.
    /// The blur on planes: 19.7-23.2 against 27.1-29.9 ms a frame (filter stage, 3 rounds).
    public static let software = CostModel(renderer: .software, perFragment: 2, perFetch: 0.5, perInstruction: 0.05,
                                           perPass: 20_000, perTransferByte: 0.1, measured: [.planeBlur: 0.75])
    /// Nanoseconds on a discrete GPU (an H100): fragments, fetches and arithmetic nearly free next
    /// to a pass (a launch and a round trip through memory, about 10 µs) or the bus (about 20 GB/s);
    /// the H100 ran the whole 1080p sepia pass in 0.22 ms.
    /// The blur on planes: 1,288-1,460 against 2,919-3,013 fps on the H100 (filter stage, 3
    /// rounds, 2026-11-28): its column passes give each of few fragments a long loop of fetches.
    public static let hardware = CostModel(renderer: .hardware, perFragment: 0.0001, perFetch: 0.0005, perInstruction: 0.00002,
                                           perPass: 10_000, perTransferByte: 0.05, measured: [.planeBlur: 2.1])

    public static func forRenderer(named name: String) -> CostModel {
        ["llvmpipe", "softpipe", "swrast"].contains { name.contains($0) } ? .software : .hardware
    }

    /// This model on a machine that can (`hasVectorKernels`) or cannot run the CPU kernels.
    public func withHostKernels(_ available: Bool) -> CostModel {
        var model = self
        if !available { model.hostEvaluation = nil }
        return model
    }

    /// The current context's renderer (`GL_RENDERER`).
    static func current() -> CostModel {
        guard let name = glGetString(GLenum(GL_RENDERER)) else { return .hardware }
        return forRenderer(named: String(cString: name)).withHostKernels(CPUFeatures.hasVectorKernels())
    }

    /// A program's cost (ns) over `fragments` fragments, each with `fetches` texel fetches and
    /// `instructions` arithmetic instructions.
    public func pass(fragments: Int, fetches: Int, instructions: Int) -> Double {
        perPass + Double(fragments) * (perFragment + Double(fetches) * perFetch + Double(instructions) * perInstruction)
    }

    public var isSoftware: Bool { renderer == .software }

    /// The CPU kernels' cost (ns) of `evaluations` evaluations of a chain of `filters` affine
    /// filters and `lookups` tables; nil where they cannot run.
    public func host(evaluations: Int, filters: Int, lookups: Int = 0) -> Double? {
        hostEvaluation.map { Double(evaluations) * ($0.base + Double(filters) * $0.perFilter + Double(lookups) * $0.perLookup) }
    }

    /// The blur kernel's cost (ns) of `tapSamples` taps and `samples` output samples; nil where the
    /// CPU cannot run the kernels.
    public func hostBlur(tapSamples: Int, samples: Int) -> Double? {
        hostEvaluation.map { Double(tapSamples) * $0.perBlurTap + Double(samples) * $0.perBlurSample }
    }

    public var description: String { renderer == .software ? "software rasteriser (per fragment and fetch)" : "GPU (per pass and transfer)" }
}
