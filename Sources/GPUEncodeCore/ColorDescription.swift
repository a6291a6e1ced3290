// How a source's colours are to be read beyond its Y'CbCr matrix: the transfer function, the
// primaries and the HDR side data (mastering display, content light level), and what to do with
// HDR. Plain values every layer shares: Media fills them from the stream, Render turns them into
// GLSL (SourceColorShader.swift), Settings parses the options that choose them.

/// The transfer characteristic of a source, as far as the renderer distinguishes them.
public enum ColorTransfer: String, Sendable {
    /// BT.709, BT.601, BT.1886, BT.2020 (10/12-bit), sRGB, unspecified: a gamma-like SDR curve.
    case sdr
    /// SMPTE ST 2084 (PQ), absolute: code values are nits up to 10000.
    case pq
    /// ARIB STD-B67 (HLG), relative: scene light, displayed through the BT.2100 OOTF.
    case hlg

    public var isHDR: Bool { self != .sdr }
}

/// The colour primaries of a source. BT.601's (SMPTE 170M, BT.470 BG) are read as BT.709's, as
/// swscale and the ffmpeg CLI do, so SDR output stays as it always was.
public enum ColorPrimaries: String, Sendable {
    case bt709, bt2020
}

/// SMPTE ST 2086 mastering display colour volume: chromaticities as CIE 1931 xy (R, G, B, white)
/// and luminance in cd/m².
public struct MasteringDisplay: Sendable, Equatable {
    public var red: (x: Double, y: Double)
    public var green: (x: Double, y: Double)
    public var blue: (x: Double, y: Double)
    public var white: (x: Double, y: Double)
    public var minLuminance: Double
    public var maxLuminance: Double

    public init(red: (x: Double, y: Double), green: (x: Double, y: Double), blue: (x: Double, y: Double), white: (x: Double, y: Double),
                minLuminance: Double, maxLuminance: Double) {
        (self.red, self.green, self.blue, self.white) = (red, green, blue, white)
        self.minLuminance = minLuminance
        self.maxLuminance = maxLuminance
    }

    public static func == (a: MasteringDisplay, b: MasteringDisplay) -> Bool {
        a.red == b.red && a.green == b.green && a.blue == b.blue && a.white == b.white
            && a.minLuminance == b.minLuminance && a.maxLuminance == b.maxLuminance
    }
}

/// CTA-861.3 content light level: the brightest pixel (MaxCLL) and frame average (MaxFALL), cd/m².
public struct ContentLightLevel: Sendable, Equatable {
    public var maxCLL: Int
    public var maxFALL: Int

    public init(maxCLL: Int, maxFALL: Int) {
        self.maxCLL = maxCLL
        self.maxFALL = maxFALL
    }
}

/// The HDR side data of a stream, as found.
public struct HDRMetadata: Sendable, Equatable {
    public var mastering: MasteringDisplay?
    public var contentLight: ContentLightLevel?

    public init(mastering: MasteringDisplay? = nil, contentLight: ContentLightLevel? = nil) {
        self.mastering = mastering
        self.contentLight = contentLight
    }

    /// The signal's peak in nits as the metadata says, ffmpeg's order (`ff_determine_signal_peak`):
    /// MaxCLL, else the mastering display's peak; nil where neither is given.
    public var peakNits: Double? {
        if let c = contentLight, c.maxCLL > 0 { return Double(c.maxCLL) }
        if let m = mastering, m.maxLuminance > 0 { return m.maxLuminance }
        return nil
    }
}

/// The tone-mapping curve from HDR to SDR (`--tonemap`).
public enum ToneMapCurve: String, Sendable, CaseIterable {
    /// ITU-R BT.2390's EETF (a Hermite knee in PQ space): libplacebo's and mpv's default.
    case bt2390
    /// John Hable's filmic curve (Uncharted 2), as ffmpeg's tonemap=hable.
    case hable
    /// Möbius: linear up to 0.3, then a smooth roll-off to the peak, as ffmpeg's tonemap=mobius.
    case mobius
    /// Reinhard x/(x+1) scaled to reach 1 at the peak, as ffmpeg's tonemap=reinhard.
    case reinhard
    /// No curve: light above the target peak is clipped.
    case clip
}

/// What happens to HDR input (`--hdr`).
public enum HDRMode: String, Sendable, CaseIterable {
    /// Tone-map to SDR BT.709 (the default).
    case tonemap
    /// Keep the HDR signal: 10-bit output in the input's colour space, tags and side data copied.
    case keep
}

/// How HDR is brought to SDR: the curve, the SDR display's peak (nits: HDR light of `targetPeak`
/// nits becomes SDR's 100%; 203 by default, BT.2408's reference white, as libplacebo and mpv; 100
/// is ffmpeg's `zscale=npl=100` + `tonemap`).
public struct ToneMapping: Sendable, Equatable {
    public var curve: ToneMapCurve
    public var targetPeak: Double
    /// Tone-map each scene to its measured peak instead of the metadata's (`--peak-detect`).
    public var peakDetect: Bool

    /// BT.2408's HDR reference white, shown as SDR's 100%: libplacebo's and mpv's SDR white.
    public static let defaultTargetPeak = 203.0

    public init(curve: ToneMapCurve = .bt2390, targetPeak: Double = ToneMapping.defaultTargetPeak, peakDetect: Bool = false) {
        self.curve = curve
        self.targetPeak = targetPeak
        self.peakDetect = peakDetect
    }
}
