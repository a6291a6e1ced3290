/// How the render graph is compiled. The optional passes (scale first, plane-native chains,
/// baked colour, cheaper blurs) change how a picture is computed, never what it should be: with
/// `optionalPasses` off the compiler keeps only the passes every plan needs, and that plan is
/// the reference the optimized one is tested against (`--no-optimize`).
public struct CompileOptions: Sendable, Equatable {
    public var optionalPasses: Bool
    /// The plan may run on the CPU kernels (`RunOnCPU`) where the cost model prefers them. Off:
    /// every step on the renderer, as frames that arrive on the GPU (the deinterlacer's) need,
    /// and as the tests that hold the renderer's own plane-native pass to the reference ask.
    public var cpuKernels: Bool

    public init(optionalPasses: Bool = true, cpuKernels: Bool = true) {
        self.optionalPasses = optionalPasses
        self.cpuKernels = cpuKernels
    }

    /// Only the passes every plan needs: the reference.
    public static let reference = CompileOptions(optionalPasses: false)
}
