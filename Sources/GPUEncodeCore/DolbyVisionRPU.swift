import Glibc

// A Dolby Vision frame's reference processing unit (RPU) as the renderer needs it: the reshaping
// curves that turn the base layer's Y'CbCr into the Dolby Vision signal, and the colour transform
// from that signal to linear light. A plain value with FFmpeg's fixed-point fields already divided
// out, so the decoder side (GPUEncodeMedia) fills it and the renderer (GPUEncodeRender) reads it
// without either seeing the other.

/// What `--dolby-vision` does with a Dolby Vision stream's RPU.
public enum DolbyVisionMode: String, Sendable, CaseIterable {
    /// Apply each frame's RPU (reshaping and colour transform), as libplacebo does (the default).
    case apply
    /// Use the backward-compatible base layer (HLG, HDR10 or SDR) and ignore the RPU.
    case base
}

public struct DolbyVisionRPU: Sendable, Equatable {
    /// One piece of a component's reshaping curve, between two pivots.
    public enum Piece: Sendable, Equatable {
        /// c0 + c1·x + c2·x² of the component's own value x (order 1 or 2; c2 is 0 for order 1).
        case polynomial([Double])
        /// Multivariate multiple regression: `constant` plus, for each order k (1...3), the 7
        /// coefficients of y^k, u^k, v^k, (yu)^k, (yv)^k, (uv)^k, (yuv)^k, over all three components.
        case mmr(constant: Double, coefficients: [[Double]])
    }

    /// A component's curve: `pivots` ascending in the base layer's normalised code range (code /
    /// (2^bitDepth − 1)); piece i maps values from pivots[i] up to pivots[i + 1].
    public struct Curve: Sendable, Equatable {
        public var pivots: [Double]
        public var pieces: [Piece]

        public init(pivots: [Double], pieces: [Piece]) {
            self.pivots = pivots
            self.pieces = pieces
        }

        /// The identity: the component passes unchanged.
        public static let identity = Curve(pivots: [0, 1], pieces: [.polynomial([0, 1, 0])])
    }

    /// The RPU's profile (vdr_rpu_profile: 0 for profile 5, 1 for profiles 7, 8).
    public var rpuProfile: Int
    /// Bits of the base layer's samples, which the pivots are normalised by.
    public var baseBitDepth: Int
    /// Y', Cb, Cr (or I, P, T) curves.
    public var curves: [Curve]
    /// The reshaped signal to non-linear (PQ) R'G'B': rgb = yccToRGB · (ycc − yccOffset); row-major.
    public var yccToRGB: [Double]
    public var yccOffset: [Double]
    /// Linear RGB to LMS (row-major); LMS goes to linear BT.2020 RGB through the Hunt-Pointer-Estevez
    /// LMS of BT.2020 without crosstalk.
    public var rgbToLMS: [Double]
    /// The mastering display's black and peak as PQ code values 0...1 (source_min_pq, source_max_pq / 4095).
    public var sourceMinPQ: Double
    public var sourceMaxPQ: Double
    /// Whether the stream needs an enhancement layer's residual (profile 7's full-enhancement
    /// layer), which is not decoded: such RPUs are not applied.
    public var needsResidual: Bool

    public init(rpuProfile: Int = 1, baseBitDepth: Int = 10, curves: [Curve] = [.identity, .identity, .identity],
                yccToRGB: [Double], yccOffset: [Double], rgbToLMS: [Double], sourceMinPQ: Double, sourceMaxPQ: Double,
                needsResidual: Bool = false) {
        self.rpuProfile = rpuProfile
        self.baseBitDepth = baseBitDepth
        self.curves = curves
        self.yccToRGB = yccToRGB
        self.yccOffset = yccOffset
        self.rgbToLMS = rgbToLMS
        self.sourceMinPQ = sourceMinPQ
        self.sourceMaxPQ = sourceMaxPQ
        self.needsResidual = needsResidual
    }

    /// How many pairs of MMR coefficient vectors (one pair per order of each MMR piece) the RPU holds.
    public var mmrOrders: Int {
        curves.reduce(0) { total, curve in
            total + curve.pieces.reduce(0) { if case .mmr(_, let c) = $1 { return $0 + c.count } else { return $0 } }
        }
    }

    /// The ST 2084 EOTF of a PQ code value, in nits.
    public static func pqNits(_ e: Double) -> Double {
        let p = pow(max(e, 0), 1 / 78.84375)
        return 10000 * pow(max(p - 0.8359375, 0) / (18.8515625 - 18.6875 * p), 1 / 0.1593017578125)
    }
}

extension DolbyVisionRPU {
    /// How the renderer reads a source whose RPU is applied: the RPU's colour transform ends in
    /// linear BT.2020 light, which is then treated as PQ BT.2020 mastered between the RPU's
    /// source_min_pq and source_max_pq (what libplacebo makes of a Dolby Vision frame: its tone
    /// mapping then takes that peak and black). The matrix and range are the base layer's (`base`).
    public func colorSpace(base: YUVColorSpace) -> YUVColorSpace {
        var color = base
        color.transfer = .pq
        color.primaries = .bt2020
        color.hdr = HDRMetadata(mastering: MasteringDisplay(red: (0.708, 0.292), green: (0.170, 0.797), blue: (0.131, 0.046),
                                                            white: (0.3127, 0.3290), minLuminance: DolbyVisionRPU.pqNits(sourceMinPQ),
                                                            maxLuminance: DolbyVisionRPU.pqNits(sourceMaxPQ)))
        return color
    }
}
