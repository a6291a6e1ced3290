import Glibc
import GPUEncodeCore

// The source's colours to the SDR BT.709 R'G'B' the filters work in, as one generated GLSL function
// `vec3 sourceRGB(vec3 yuv)` (yuv: the normalised texture values). For SDR BT.709/601 it is the
// Y'CbCr matrix alone, exactly as before, so SDR output is unchanged to the byte. Otherwise the
// signal goes through linear light:
//
// - SDR BT.2020: BT.1886 EOTF (a 2.4 power, as zimg's display-referred BT.709/2020 curve), the
//   BT.2020 → BT.709 primaries matrix, gamut mapping (below), the inverse EOTF.
// - PQ (SMPTE ST 2084): the PQ EOTF gives absolute nits (10000 at code 1.0).
// - HLG (ARIB STD-B67): the inverse OETF gives scene light 0...1, then the BT.2100 OOTF at the
//   nominal peak Lw (1000 nits unless the side data says otherwise): Fd = Lw · Ys^(γ-1) · E with
//   γ = 1.2 + 0.42·log10(Lw/1000), never below 1 (`hlgSystemGamma`), and Ys the BT.2020
//   luminance of the scene light, after BT.2100's black level lift β = √(3·(Lb/Lw)^(1/γ)) for a
//   display black Lb (the mastering display's, else 0.005 nits as libplacebo assumes). R'G'B' are
//   read up to BT.2100's narrow-range ceiling, not clipped at 1 (`signalCeiling`).
//
//   HDR light is then counted in units of the SDR target peak (`--target-peak`, 100 nits: 1.0 is
//   SDR reference white, as ffmpeg's `zscale=npl=100` + `tonemap` count it), converted to BT.709
//   primaries in linear light, gamut-mapped, tone-mapped and encoded with the BT.1886 inverse EOTF.
//
// Gamut mapping (BT.2020 colours BT.709 cannot show): a colour with a negative channel after the
// primaries matrix is desaturated towards its own BT.709 luminance, along a line of constant hue,
// by just as much as brings its lowest channel to 0 (libplacebo's `desaturate` gamut mode). Unlike
// a per-channel clip it keeps luminance and hue (a clip turns saturated greens yellow and loses
// their brightness); colours inside BT.709 are untouched, so in-gamut material matches zimg's
// conversion exactly.
//
// Per-scene peak detection (PeakDetector.swift) replaces the constant peak by the uniform
// `detectedPeak` (target-peak units), measured from `sourceLinear` on the GPU before each frame
// (for bt2390 in the source's primaries, where libplacebo measures it too).
//
// bt2390 follows libplacebo's default rendition (libplacebo 4.208 through ffmpeg 5.1, the
// reference): gamut-mapped in BT.709 (as above) but tone-mapped in the source's own primaries, on
// luminance with libplacebo's crosstalk and highlight desaturation (`luminanceApply`), then
// converted to BT.709 and clipped (only the tone mapping's own overshoots are left to clip).
// The other curves act on the largest of R, G, B (`sig`) of BT.709 light and scale the three
// channels by the same ratio, as ffmpeg's `tonemap` filter does. With `peak` the source peak and
// `sig` in units of the target peak:
// - bt2390: ITU-R BT.2390-x's EETF: sig and the peaks in PQ, normalised so the source peak is 1;
//   below the knee KS = 2·maxLum − 1 (libplacebo's knee offset 1.0; BT.2390 writes 0.5)
//   unchanged, above it a Hermite spline that reaches maxLum (the target peak) at 1, then the
//   black level lift minLum·(1 − E)^min(1/minLum, 4).
// Where the peak does not exceed the target (peak ≤ 1) no curve compresses (bt2390 keeps only its
// black level lift, the SDR display's black); light above the peak stays at the peak's value.
// - hable: h(sig)/h(peak), h(x) = (x(Ax+CB)+DE)/(x(Ax+B)+DF) − E/F, A..F = .15 .5 .1 .2 .02 .3,
//   faded in from the identity between peak 1 and 2 (`toneMapOnset`), as reinhard.
// - mobius: linear up to j = 0.3, then (b+j)²/(b−a) · (x+a)/(x+b) with a, b making it reach 1 at
//   the peak with a continuous slope (ffmpeg's formula).
// - reinhard: sig/(sig+1) · (peak+1)/peak (ffmpeg's tonemap=reinhard with its default param).
// - clip: min(sig, 1).

/// The GLSL of `vec3 sourceRGB(vec3 yuv)` for one source colour description and tone mapping.
/// Needs the uniforms `yuvToRgb` and `yuvOffset` (and `detectedPeak` with peak detection); for HDR
/// it also defines `vec3 sourceLinear(vec3 yuv)`, linear light in target-peak units, in the
/// primaries the curve works in (bt2390: the source's, gamut-mapped; the others: BT.709).
package struct SourceColorShader {
    package var color: YUVColorSpace
    package var toneMapping: ToneMapping

    /// `--hdr keep`: the source's R'G'B' through its own Y'CbCr matrix only, whatever its transfer
    /// and primaries (no linearisation, no primaries conversion, no tone mapping): filters see the
    /// HDR signal's non-linear R'G'B', and the output goes back through the same matrix.
    package var keepsSignal: Bool

    /// Whether R'G'B' used as they are (`isIdentity` or `keepsSignal`) are clamped to 0...1. Off for
    /// chains that are transparent (identity filters only, or none: `FrameRenderer.isTransparent`):
    /// camera Y'CbCr often lies outside the R'G'B' cube (saturated greens), and an identity round
    /// trip must give it back rather than the nearest colour inside. Filters need the clamp.
    package var clamped: Bool

    /// Dolby Vision: the frame's RPU turns the base layer into linear light (DolbyVisionReshape.swift)
    /// in place of the transfer function; `color` is then `DolbyVisionRPU.colorSpace`'s (PQ BT.2020).
    package var dolbyVision: DolbyVisionReshape?

    package init(color: YUVColorSpace, toneMapping: ToneMapping = ToneMapping(), keepsSignal: Bool = false, clamped: Bool = true) {
        self.color = color
        self.toneMapping = toneMapping
        self.keepsSignal = keepsSignal
        self.clamped = clamped
    }

    /// The source's R'G'B' are used as they are: SDR with BT.709 primaries (BT.601's read as such).
    package var isIdentity: Bool { color.transfer == .sdr && color.primaries == .bt709 }

    /// The HLG nominal peak or PQ signal peak in nits: the side data's (MaxCLL, else the mastering
    /// display's peak), else 1000 for HLG (BT.2100's reference display) and 10000 for PQ (the
    /// format's own ceiling), as libplacebo and ffmpeg's `ff_determine_signal_peak` assume.
    package var sourcePeakNits: Double {
        color.hdr.peakNits ?? (color.transfer == .pq ? 10000 : 1000)
    }

    /// BT.2100's HLG system gamma for a display of nominal peak `peakNits`, 1.2 + 0.42·log10(Lw/1000),
    /// never below 1: BT.2100 defines it from 400 nits up, and below it falls to 0 at 1 nit (the
    /// OOTF would then darken as the signal rises). libplacebo does the same: its rendition of an
    /// HLG ramp with a 203-nit mastering display fits γ = 0.99 (BT.2100's formula gives 0.91,
    /// BT.2390's extended form 1.2·1.111^log2(Lw/1000) 0.94).
    static func hlgSystemGamma(peakNits: Double) -> Double {
        max(1.2 + 0.42 * log10(peakNits / 1000), 1)
    }

    package var glsl: String {
        // HDR R'G'B' keep their super-whites (up to BT.2100's narrow-range ceiling) on the way to
        // linear light: a saturated colour's largest channel often lies above 1 (BT.709 blue written
        // as HLG BT.2020 has B' = 1.07), and clipping it alone changes the channels' ratios, hence the
        // hue once the primaries are converted (that blue came out violet, 77,0,253).
        let ceiling = isIdentity || keepsSignal || color.transfer == .sdr ? "1.0" : f(SourceColorShader.signalCeiling)
        func head(_ name: String) -> String { "vec3 \(name)(vec3 yuv) {\n    vec3 e = clamp(yuvToRgb * yuv + yuvOffset, 0.0, \(ceiling));\n" }
        if isIdentity || keepsSignal {
            return clamped ? head("sourceRGB") + "    return e;\n}\n\n" : "vec3 sourceRGB(vec3 yuv) {\n    return yuvToRgb * yuv + yuvOffset;\n}\n\n"
        }
        let toLinear709 = SourceColorShader.glslMatrix(SourceColorShader.bt2020ToBT709)
        if color.transfer == .sdr {
            // Wide-gamut SDR: primaries through linear light, nothing to tone-map.
            return SourceColorShader.helpers + head("sourceRGB") + """
                vec3 c = \(toLinear709) * pow(e, vec3(2.4));
                return pow(clamp(desaturateIntoGamut(c), 0.0, 1.0), vec3(1.0 / 2.4));
            }

            """
        }
        let target = toneMapping.targetPeak
        let peakNits = sourcePeakNits
        var linear: String
        switch color.transfer {
        case .pq:
            linear = "    vec3 nits = 10000.0 * pqEOTF(e);\n"
        case .hlg, .sdr:
            let gamma = SourceColorShader.hlgSystemGamma(peakNits: peakNits)
            // BT.2100's black level lift β for a display of black Lb and peak Lw (the signal is
            // raised by β·(1 − E′) before the inverse OETF): Lb is the mastering display's black,
            // else 0.005 nits, as libplacebo assumes for an HLG display (measured: its rendition
            // of an HLG pattern matches this lift, with or without mastering metadata).
            let black = color.hdr.mastering.map { $0.minLuminance } ?? 0
            // (A black above 1% of the peak, which only wrong metadata gives, is taken as 1%: a lift β
            // of 1 or more would flatten or invert the signal.)
            let beta = (3 * pow(min(black > 0 ? black : 0.005, peakNits / 100) / peakNits, 1 / gamma)).squareRoot()
            linear = """
                vec3 scene = hlgInverseOETF(\(f(1 - beta)) * e + \(f(beta)));
                float ys = max(dot(vec3(0.2627, 0.6780, 0.0593), scene), 1e-6);
                vec3 nits = \(f(peakNits)) * pow(ys, \(f(gamma - 1))) * scene;

            """
        }
        if dolbyVision != nil { linear = "    vec3 nits = 10000.0 * dolbyVisionLinear(yuv);\n" }
        let primaries = color.primaries == .bt2020 ? "\(toLinear709) * " : ""
        let peak = toneMapping.peakDetect ? "detectedPeak" : f(max(peakNits / target, 1))
        // bt2390 as libplacebo renders it: gamut-mapped in BT.709 and brought back to the source's
        // primaries (BT.2020), tone-mapped there, converted to BT.709 and clipped, encoded for a
        // display of 1000:1 contrast. The others as ffmpeg's zscale + tonemap: converted to BT.709
        // and gamut-mapped, tone-mapped there, encoded with a pure 2.4 power (black at 0).
        let fromLinear709 = SourceColorShader.glslMatrix(SourceColorShader.invert(SourceColorShader.bt2020ToBT709))
        let (toLinear, toSDR) = toneMapping.curve == .bt2390
            ? (color.primaries == .bt2020 ? "\(fromLinear709) * desaturateIntoGamut(\(toLinear709) * (nits / \(f(target))))" : "nits / \(f(target))",
               "bt1886Inverse(clamp(\(primaries)toneMap(sourceLinear(yuv), \(peak)), 0.0, 1.0))")
            : ("desaturateIntoGamut(\(primaries)(nits / \(f(target))))",
               "gamma24Inverse(clamp(toneMap(sourceLinear(yuv), \(peak)), 0.0, 1.0))")
        return SourceColorShader.helpers + (dolbyVision?.glsl ?? "") + SourceColorShader.curve(toneMapping.curve, target: target, hybrid: peakNits / target > 10,
                                                                 bt2020: color.primaries == .bt2020)
            + (toneMapping.peakDetect ? "uniform float detectedPeak;\n" : "")
            + head("sourceLinear") + linear + """
                return \(toLinear);
            }
            vec3 sourceRGB(vec3 yuv) {
                return \(toSDR);
            }

            """
    }

    /// The transfer functions and the gamut mapping.
    static let helpers = """
    // SMPTE ST 2084 EOTF: code value 0...1 to 0...1 of 10000 nits.
    vec3 pqEOTF(vec3 e) {
        vec3 p = pow(max(e, 0.0), vec3(1.0 / 78.84375));
        return pow(max(p - 0.8359375, 0.0) / (18.8515625 - 18.6875 * p), vec3(1.0 / 0.1593017578125));
    }
    float pqInverseEOTF(float y) {
        float p = pow(max(y, 0.0), 0.1593017578125);
        return pow((0.8359375 + 18.8515625 * p) / (1.0 + 18.6875 * p), 78.84375);
    }
    // BT.1886 inverse EOTF for a display of 1000:1 contrast (Lw = 1, Lb = 0.001), as libplacebo
    // encodes SDR: V = (L / a)^(1/2.4) - b.
    vec3 bt1886Inverse(vec3 l) {
        const float lb = 0.05623413; // 0.001^(1/2.4)
        const float a = pow(1.0 - lb, 2.4);
        const float b = lb / (1.0 - lb);
        return max(pow(l / a, vec3(1.0 / 2.4)) - b, 0.0);
    }
    vec3 gamma24Inverse(vec3 l) { return pow(l, vec3(1.0 / 2.4)); }
    // ARIB STD-B67 inverse OETF: code value to scene light 0...1 (BT.2100 table 5).
    vec3 hlgInverseOETF(vec3 e) {
        const float a = 0.17883277, b = 0.28466892, c = 0.55991073;
        return mix(e * e / 3.0, (exp((e - c) / a) + b) / 12.0, step(0.5, e));
    }
    // Out-of-gamut colours (a negative channel) desaturated towards their BT.709 luminance, hue
    // kept, just enough to bring the lowest channel to 0.
    vec3 desaturateIntoGamut(vec3 c) {
        float y = max(dot(vec3(0.2126, 0.7152, 0.0722), c), 0.0);
        float low = min(min(c.r, c.g), c.b);
        if (low >= 0.0) return c;
        float t = y / max(y - low, 1e-9);
        return max(vec3(y) + t * (c - vec3(y)), 0.0);
    }

    """

    /// The largest R'G'B' value an HDR signal is read with: BT.2100's narrow-range ceiling (10-bit
    /// code 1019; the codes above are reserved). Higher values, which only broken chroma makes,
    /// would take PQ's EOTF towards its pole (R' ≈ 1.9) for nothing.
    static let signalCeiling = (1019.0 - 64) / 876

    /// `vec3 toneMap(vec3 c, float peak)`: the curve on max(R, G, B), applied as a ratio (bt2390:
    /// on luminance, `luminanceApply`). Every curve is finite, continuous and non-decreasing in
    /// `sig` for every peak, holds light above the peak at the peak's value (or keeps rising), and
    /// compresses nothing where the peak does not exceed the target (`peak` ≤ 1): there the
    /// picture is shown as it is and only the SDR display clips.
    static func curve(_ curve: ToneMapCurve, target: Double, hybrid: Bool = false, bt2020: Bool = true) -> String {
        let body: String
        switch curve {
        case .clip:
            body = "return min(sig, 1.0);"
        case .reinhard:
            body = "return mix(sig, sig / (sig + 1.0) * (peak + 1.0) / peak, toneMapOnset(peak));"
        case .hable:
            return toneMapOnset + """
            float hable(float x) {
                const float a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30;
                return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f;
            }
            float curve(float sig, float peak) { return mix(sig, hable(sig) / hable(max(peak, 1.0)), toneMapOnset(peak)); }

            """ + apply
        case .mobius:
            // Tends to the identity as the peak comes down to the target (b grows without bound).
            body = """
            const float j = 0.3;
                if (sig <= j || peak <= 1.0) return sig;
                float a = -j * j * (peak - 1.0) / (j * j - 2.0 * j + peak);
                float b = (j * j - 2.0 * j * peak + peak) / max(peak - 1.0, 1e-6);
                return (b * b + 2.0 * b * j + j * j) / (b - a) * (sig + a) / (sig + b);
            """
        case .bt2390:
            // PQ of the target peak relative to the source peak; sig and peak in target-peak units.
            // A peak at or below the target gives maxLum = 1: the knee at the top, no spline.
            body = """
            float scale = \(f(target / 10000));
                float srcPQ = pqInverseEOTF(max(peak, 1.0) * scale);
                // Light above the peak (metadata that understates it, a smoothed measured peak) is
                // held at the peak: the spline ends flat and would turn down past its end.
                float e = min(pqInverseEOTF(sig * scale) / srcPQ, 1.0);
                float maxLum = min(pqInverseEOTF(scale) / srcPQ, 1.0);
                // The knee: libplacebo's default offset 1.0 (ITU-R BT.2390 writes 0.5: 1.5·maxLum − 0.5).
                float ks = 2.0 * maxLum - 1.0;
                if (e > ks) {
                    // (e ≤ 1, so ks < 1 here.)
                    float t = (e - ks) / (1.0 - ks);
                    float t2 = t * t, t3 = t2 * t;
                    e = (2.0 * t3 - 3.0 * t2 + 1.0) * ks + (t3 - 2.0 * t2 + t) * (1.0 - ks) + (-2.0 * t3 + 3.0 * t2) * maxLum;
                }
                // BT.2390's black level lift to the SDR display's black (1000:1, as libplacebo's), at
                // every peak: it is the display's black, not a compression (bt1886Inverse puts it at
                // code 0). The exponent min(1/minLum, 4) (libplacebo's later form) keeps it
                // non-decreasing where the display's black is a large part of the range (high targets).
                float minLum = pqInverseEOTF(0.001 * scale) / srcPQ;
                e += minLum * pow(1.0 - e, min(1.0 / minLum, 4.0));
                return 10000.0 * pqEOTF(vec3(e * srcPQ)).x / \(f(target));
            """
            return toneMapOnset + "float curve(float sig, float peak) {\n    \(body)\n}\n\n" + luminanceApply(hybrid: hybrid, bt2020: bt2020)
        }
        return toneMapOnset + "float curve(float sig, float peak) {\n    \(body)\n}\n\n" + apply
    }

    /// How much of a curve that is not the identity at the target (ffmpeg's hable and reinhard,
    /// which at peak 1 brighten mid-grey by 13% and 33%) applies: none at or below the target, all
    /// of it from twice the target, so a measured peak that crosses the target changes the picture
    /// gradually.
    static let toneMapOnset = "float toneMapOnset(float peak) { return clamp(peak - 1.0, 0.0, 1.0); }\n"

    /// bt2390's `vec3 toneMap(vec3 c, float peak)`: libplacebo's default tone-mapping mode
    /// ('auto', libplacebo 4.208 as ffmpeg 5.1's libplacebo filter runs it) on the source's linear
    /// light in its own primaries (`bt2020`, else BT.709):
    /// - crosstalk 0.04: each channel takes 4% of the others before (and gives it back after),
    ///   so saturated colours approach white as they brighten, as on film;
    /// - the curve on luminance Y (XYZ, with X and Z as differences from Y relative to D65 white),
    ///   X and Z scaled by (Y'/Y)^(1 + k) so highlights desaturate a little (k = ln 1.1 / ln(1000/203):
    ///   1000 nits to SDR desaturates by 1.1), and Y lowered by 0.1·X where the range is reduced
    ///   (faded in over the first 1% above the target, where libplacebo switches it on at once: a
    ///   dim scene's measured peak lies just above the target, and a slower fade cost 3 dB there);
    /// - `hybrid` (a peak over 10x the target): mixed with the curve per channel by
    ///   max(Lb^2.4/Y^2.4, Y^2.4), so near black and near white the channels are mapped each alone
    ///   (the weight clamped to 0...1 here; libplacebo extrapolates below the display's black).
    /// (On max(R, G, B) instead, libplacebo's `tonemapping_mode=max`, saturated colours come out
    /// darker and more saturated than libplacebo's default rendition: the HLG test pattern scored
    /// 27 dB against it, 41.5 dB against `max`.)
    static func luminanceApply(hybrid: Bool, bt2020: Bool) -> String {
        let m = bt2020 ? rgbToXYZ(r: (0.708, 0.292), g: (0.170, 0.797), b: (0.131, 0.046))
            : rgbToXYZ(r: (0.64, 0.33), g: (0.30, 0.60), b: (0.15, 0.06))
        let white = (x: 0.3127 / 0.3290, z: (1 - 0.3127 - 0.3290) / 0.3290)
        let toXYZ = [(0..<3).map { m[0][$0] / white.x - m[1][$0] }, m[1], (0..<3).map { m[2][$0] / white.z - m[1][$0] }]
        let desaturation = log(1.1) / log(1000.0 / 203)
        // Hybrid: near black and white the channels are mapped each alone (libplacebo's weights).
        let hybridMix = hybrid ? """
                vec3 each = vec3(curve(max(c.r, 0.0), peak), curve(max(c.g, 0.0), peak), curve(max(c.b, 0.0), peak));
                float k = pow(max(xyz.y, 1e-6), 2.4);
                lum = mix(lum, each, clamp(max(\(f(pow(0.001, 2.4))) / k, k), 0.0, 1.0));

            """ : ""
        return """
        vec3 toneMap(vec3 c, float peak) {
            const float ct = 0.04;
            c = (1.0 - 3.0 * ct) * c + ct * (c.r + c.g + c.b);
            vec3 xyz = \(glslMatrix(toXYZ)) * c;
            float orig = max(xyz.y, 0.001);
            float y = curve(max(xyz.y, 0.0), peak);
            xyz.xz *= pow(y / orig, \(f(desaturation))) * y / orig;
            xyz.y = y - max(0.1 * xyz.x, 0.0) * clamp((peak - 1.0) * 100.0, 0.0, 1.0);
            vec3 lum = \(glslMatrix(invert(toXYZ))) * xyz;
        \(hybridMix)    return (lum - ct * (lum.r + lum.g + lum.b)) / (1.0 - 3.0 * ct);
        }

        """
    }

    private static let apply = """
    vec3 toneMap(vec3 c, float peak) {
        float sig = max(max(c.r, c.g), max(c.b, 1e-6));
        return c * (curve(sig, peak) / sig);
    }

    """

    /// Linear BT.2020 RGB to linear BT.709 RGB (both D65), from the primaries' xy via XYZ.
    static let bt2020ToBT709: [[Double]] = {
        let to709 = invert(rgbToXYZ(r: (0.64, 0.33), g: (0.30, 0.60), b: (0.15, 0.06)))
        return multiply(to709, rgbToXYZ(r: (0.708, 0.292), g: (0.170, 0.797), b: (0.131, 0.046)))
    }()

    static func rgbToXYZ(r: (Double, Double), g: (Double, Double), b: (Double, Double)) -> [[Double]] {
        let w = (0.3127, 0.3290)
        func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
        let m = [xyz(r), xyz(g), xyz(b)]
        let cols = [[m[0][0], m[1][0], m[2][0]], [m[0][1], m[1][1], m[2][1]], [m[0][2], m[1][2], m[2][2]]]
        let s = multiply(invert(cols), [[xyz(w)[0]], [xyz(w)[1]], [xyz(w)[2]]])
        return cols.map { row in (0..<3).map { row[$0] * s[$0][0] } }
    }

    static func multiply(_ a: [[Double]], _ b: [[Double]]) -> [[Double]] {
        a.map { row in (0..<b[0].count).map { j in (0..<b.count).reduce(0) { $0 + row[$1] * b[$1][j] } } }
    }

    static func invert(_ m: [[Double]]) -> [[Double]] {
        let (a, b, c, d, e, f, g, h, i) = (m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2])
        let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
        return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
                [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
                [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]
    }

    /// A GLSL mat3 (column-major constructor) of row-major `m`.
    static func glslMatrix(_ m: [[Double]]) -> String {
        "mat3(" + (0..<3).flatMap { c in (0..<3).map { r in f(m[r][c]) } }.joined(separator: ", ") + ")"
    }
}

/// A GLSL float literal (always with a point or exponent).
private func f(_ v: Double) -> String {
    let s = "\(v)"
    return s.contains(".") || s.contains("e") ? s : s + ".0"
}
