// The kernels that take full-resolution R'G'B' to the output's left-sited 4:2:0 chroma, chosen per
// axis by what the source's chroma was along it.

/// The chroma downsampling of the unscaled writers: five taps across (columns 2i-2 .. 2i+2, the
/// output chroma co-sited with column 2i) by four down (rows 2j-1 .. 2j+2, the output chroma
/// centred between rows 2j and 2j+1), as the writers' `chromaH` and `chromaV` constants.
///
/// An axis along which the source's chroma was subsampled (as 4:2:0's both, 4:2:2's across) was
/// upsampled linearly by the source pass; its kernel is that upsampling's exact inverse, so the
/// identity preset returns the source's chroma samples as they were:
/// - across, LeGall's 5/3 analysis low-pass (-1, 2, 6, 2, -1) / 8 (the biorthogonal partner of
///   the linear interpolation of co-sited chroma, JPEG 2000's reversible wavelet);
/// - down, (-1, 3, 3, -1) / 4 (Cohen-Daubechies-Feauveau's (3, 1) analysis low-pass: the partner of
///   the 3/4, 1/4 interpolation of chroma centred between two rows). The (-1, 5, 5, -1) / 8 used
///   before left the round trip [1, 14, 1] / 16, not the identity.
///
/// An axis whose chroma was never subsampled (4:4:4's both, 4:2:2's down) carries detail up to the
/// luma Nyquist frequency that those kernels, made to undo an interpolation, pass through to alias;
/// it gets an anti-aliasing low-pass instead: across the tent (1, 2, 1) / 4, down (1, 15, 15, 1) / 32
/// (the box of two rows with a sixteenth of its weight on the outer rows). Against swscale's
/// `format=yuv420p` from 4:4:4 those score at or above the tent x box of the release before the
/// inverse kernels (ChromaFidelityTests; testsrc2 Cb/Cr 35.8/32.6 dB), which the inverse kernels do
/// not (33.2/29.5; LeGall x (-1, 5, 5, -1) / 8: 34.1/30.7).
///
/// Every kernel has taps 1 and 3 of 1/4 across (any five-tap kernel that sums to one and nulls the
/// luma Nyquist frequency has) and is symmetric down, which the per-plane chroma pass relies on.
struct ChromaDecimator: Equatable {
    /// Across (five taps) and down (four taps).
    let across: [Double]
    let down: [Double]

    static let undoesLinearAcross: [Double] = [-0.125, 0.25, 0.75, 0.25, -0.125]
    static let undoesLinearDown: [Double] = [-0.25, 0.75, 0.75, -0.25]
    static let antiAliasAcross: [Double] = [0, 0.25, 0.5, 0.25, 0]
    static let antiAliasDown: [Double] = [0.03125, 0.46875, 0.46875, 0.03125]

    /// `subsampledAcross`, `subsampledDown`: whether the source's chroma was subsampled along the
    /// output's horizontal and vertical axes.
    init(subsampledAcross: Bool, subsampledDown: Bool) {
        across = subsampledAcross ? ChromaDecimator.undoesLinearAcross : ChromaDecimator.antiAliasAcross
        down = subsampledDown ? ChromaDecimator.undoesLinearDown : ChromaDecimator.antiAliasDown
    }

    /// The kernels for `g`'s source: a quarter turn swaps which source axis lies along which
    /// output axis.
    init(for g: RenderGeometry) {
        let (x, y) = g.rotation.swapsDimensions ? (g.chromaShiftY, g.chromaShiftX) : (g.chromaShiftX, g.chromaShiftY)
        self.init(subsampledAcross: x > 0, subsampledDown: y > 0)
    }

    /// Whether the kernel across is the inverse of the linear upsampling (the packed pass's outer
    /// rows take the chroma at the sample's own column on that ground).
    var undoesLinearAcross: Bool { across == ChromaDecimator.undoesLinearAcross }

    /// `glsl` (a whole writer shader, which declares `chromaH` and `chromaV` from these macros)
    /// with the kernels defined for the preprocessor.
    func defined(in glsl: String) -> String {
        func array(_ taps: [Double]) -> String { "float[\(taps.count)](\(taps.map { String($0) }.joined(separator: ", ")))" }
        return FrameRenderer.defining("CHROMA_ACROSS", as: array(across), in: FrameRenderer.defining("CHROMA_DOWN", as: array(down), in: glsl))
    }
}
