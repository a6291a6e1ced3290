import Glibc

// Blurs and sharpening: filters that read a neighbourhood, so each gets passes of its own.

public enum BlurFilters {
    public static let all: [FilterDeclaration] = [
        GaussianBlurFilter.declaration,
        BoxBlurFilter.declaration,
        FastBlurFilter.declaration,
        SelectiveBlurFilter.declaration,
        TiltShiftFilter.declaration,
        UnsharpMaskFilter.declaration,
        SharpenFilter.declaration,
        MedianFilter.declaration,
        BilateralFilter.declaration,
    ]
}

/// Separable Gaussian: a horizontal then a vertical pass. Weights come from sigma and are
/// normalised to sum to 1; each pair of neighbouring taps is merged into one bilinear fetch at the
/// weighted position between them, so 2r+1 taps cost r+1 fetches.
public enum GaussianBlurFilter {
    /// Merged taps per side the shader holds: radius up to 2 * 48 = 96 pixels.
    static let maxPairs = 48

    /// Offsets (pixels) and weights of the merged taps: index 0 is the centre, then one per pair.
    public static func taps(sigma: Double, radius: Int) -> (offsets: [Float], weights: [Float]) {
        let r = max(0, radius)
        var w = (0...r).map { i in exp(-Double(i * i) / (2 * sigma * sigma)) }
        let total = w[0] + 2 * w[1...].reduce(0, +)
        w = w.map { $0 / total }
        var offsets: [Float] = [0]
        var weights: [Float] = [Float(w[0])]
        var i = 1
        while i <= r {
            let a: Double = w[i]
            let b: Double = i + 1 <= r ? w[i + 1] : 0
            let at: Double = (Double(i) * a + Double(i + 1) * b) / (a + b)
            offsets.append(Float(at))
            weights.append(Float(a + b))
            i += 2
        }
        return (offsets, weights)
    }

    static func radius(_ f: FilterInstance) -> (sigma: Double, radius: Int) {
        var sigma = f.double("sigma")
        var radius = Int(f.double("radius"))
        if sigma <= 0 { sigma = max(Double(radius) / 3, 0.01) }
        if radius <= 0 { radius = Int((3 * sigma).rounded(.up)) }
        return (sigma, min(radius, 2 * maxPairs))
    }

    static let pass = { (axis: String) in """
    vec4 {{p}}run(vec2 uv) {
        vec2 step = \(axis) / {{p}}inputSize;
        vec4 sum = texture({{p}}input, uv) * {{p}}weights[0];
        for (int i = 1; i < int({{p}}count); i++) {
            vec2 d = step * {{p}}offsets[i];
            sum += (texture({{p}}input, uv + d) + texture({{p}}input, uv - d)) * {{p}}weights[i];
        }
        return sum;
    }
    """ }

    /// How much smaller the blur runs for this filter (1: at full size). A wide Gaussian is nearly
    /// the same when computed on a picture box-averaged by 2 or 4 and scaled back up bilinearly
    /// (both add a little blur of their own, taken out of sigma), at a quarter or a sixteenth of
    /// the cost; `quality: exact` turns this off.
    public static func divisor(_ f: FilterInstance) -> Int {
        guard f.string("quality") != "exact", f.double("radius") <= 0 else { return 1 }
        let sigma = f.double("sigma")
        return sigma >= fastFrom4 ? 4 : sigma >= fastFrom2 ? 2 : 1
    }
    static let fastFrom2 = 4.0
    static let fastFrom4 = 8.0

    /// The sigma to use on the reduced picture (in its own pixels) so that box-down, blur and
    /// bilinear-up add up to the requested variance: box d has (d^2 - 1) / 12, the bilinear tent
    /// d^2 / 6.
    static func reducedSigma(_ sigma: Double, _ d: Int) -> Double {
        let dd = Double(d * d)
        return (max(sigma * sigma - (dd - 1) / 12 - dd / 6, 0.25) / dd).squareRoot()
    }

    /// A d x d box average as (d/2)^2 bilinear fetches, each the mean of a 2x2 block. The reduced
    /// picture has `margin` texels more on every side (`passMargin`): its texel i covers full-size
    /// pixels (i - margin) d ..< (i - margin + 1) d, read clamped to the edge outside the picture.
    /// `block`: GLSL for the mean of the 2x2 block around a full-size pixel corner `c`: the input
    /// texture's bilinear fetch, or the source's own `sourceQuad` (`FilterDeclaration.sourcePass`).
    static func downsample(_ d: Int, block: (String) -> String = { "texture({{p}}input, (\($0)) / {{p}}inputSize)" }) -> String {
        var taps: [String] = []
        for j in 0..<(d / 2) { for i in 0..<(d / 2) { taps.append("vec2(\(Double(2 * i - d / 2 + 1)), \(Double(2 * j - d / 2 + 1)))") } }
        return """
        vec4 {{p}}run(vec2 uv) {
            vec2 centre = (uv * outSize - {{p}}margin) * \(Double(d));
            vec4 sum = vec4(0.0);
        \(taps.map { "    sum += \(block("centre + \($0)"));" }.joined(separator: "\n"))
            return sum / \(Double(taps.count));
        }
        """
    }

    /// `pass` over the reduced picture with its taps written into the shader as constants (sigma
    /// cannot be keyframed, so they are fixed for the run). why: llvmpipe runs a loop bounded by a
    /// uniform, over uniform arrays, at several times the cost of the same fetches unrolled.
    static func unrolled(_ f: FilterInstance, _ axis: String) -> String {
        let (sigma, _) = radius(f)
        let r = reducedSigma(sigma, divisor(f))
        let (offsets, weights) = taps(sigma: r, radius: Int((3 * r).rounded(.up)))
        var lines = ["    vec4 sum = texture({{p}}input, uv) * \(weights[0]);"]
        for i in 1..<offsets.count {
            lines.append("    sum += (texture({{p}}input, uv + step * \(offsets[i])) + texture({{p}}input, uv - step * \(offsets[i]))) * \(weights[i]);")
        }
        return "vec4 {{p}}run(vec2 uv) {\n    vec2 step = \(axis) / {{p}}inputSize;\n" + lines.joined(separator: "\n") + "\n    return sum;\n}"
    }

    /// Back to full size: bilinear from the reduced picture, past its margin.
    static func upsample(_ d: Int) -> String {
        "vec4 {{p}}run(vec2 uv) { return texture({{p}}input, (uv * outSize / \(Double(d)) + {{p}}margin) / {{p}}inputSize); }"
    }

    /// The reduced passes' margin: the reduced blur's radius plus one texel for the bilinear step back up.
    static func margin(_ f: FilterInstance) -> Int {
        let d = divisor(f)
        guard d > 1 else { return 0 }
        return Int((3 * reducedSigma(radius(f).sigma, d)).rounded(.up)) + 1
    }

    public static let declaration: FilterDeclaration = {
        var d = plainDeclaration
        d.sourcePass = { f in divisor(f) > 1 ? downsample(divisor(f), block: { "sourceQuad(\($0))" }) : nil }
        d.finalUpsample = { f in divisor(f) > 1 ? divisor(f) : nil }
        return d
    }()

    static let plainDeclaration = FilterDeclaration(
        name: "gaussianBlur",
        summary: "Gaussian blur, separable (horizontal then vertical pass) with bilinear-merged taps; sigma 4 and up runs on a picture reduced 2x (8 and up: 4x) unless quality is exact.",
        category: .blur,
        parameters: [
            .float("sigma", default: 2, range: 0...32, "standard deviation in pixels (0: radius / 3)"),
            .int("radius", default: 0, range: 0...96, "taps each side in pixels (0: 3 x sigma, rounded up); giving it forces the exact path"),
            .choice("quality", ["auto", "exact"], default: "auto", "auto computes wide blurs on a reduced picture with a margin past the borders (within 3 code values of exact, borders included); exact always blurs at full size"),
        ],
        kind: .sampling(glsl: """
        uniform float {{p}}offsets[\(maxPairs + 1)];
        uniform float {{p}}weights[\(maxPairs + 1)];
        uniform float {{p}}count;
        uniform float {{p}}margin;
        """, passes: [pass("vec2(1.0, 0.0)"), pass("vec2(0.0, 1.0)")]),
        check: { f in f.double("sigma") <= 0 && f.double("radius") <= 0 ? "give sigma or radius" : nil },
        arrays: { f, _, _ in
            var (sigma, radius) = radius(f)
            let d = divisor(f)
            if d > 1 {
                sigma = reducedSigma(sigma, d)
                radius = Int((3 * sigma).rounded(.up))
            }
            let (offsets, weights) = taps(sigma: sigma, radius: radius)
            return ["offsets": offsets, "weights": weights, "count": [Float(offsets.count)]]
        },
        passPlan: { f in
            let d = divisor(f)
            guard d > 1 else { return [(pass("vec2(1.0, 0.0)"), 1), (pass("vec2(0.0, 1.0)"), 1)] }
            return [(downsample(d), d), (unrolled(f, "vec2(1.0, 0.0)"), d), (unrolled(f, "vec2(0.0, 1.0)"), d),
                    (upsample(d), 1)]
        },
        passMargin: { margin($0) }
    )
}
