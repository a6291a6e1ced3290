/// How the render graph is compiled. The optional passes (scale first, plane-native chains,
/// baked colour, cheaper blurs) change how a picture is computed, never what it should be: with
/// `optionalPasses` off the compiler keeps only the passes every plan needs, and that plan is
/// the reference the optimized one is tested against (`--no-optimize`).
public struct CompileOptions: Sendable, Equatable {
    public var optionalPasses: Bool

    public init(optionalPasses: Bool = true) {
        self.optionalPasses = optionalPasses
    }

    /// Only the passes every plan needs: the reference.
    public static let reference = CompileOptions(optionalPasses: false)
}
