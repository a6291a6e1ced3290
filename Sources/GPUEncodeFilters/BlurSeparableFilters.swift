import Glibc

// Separable convolutions (box, GPUImage's fast blur) and the blurs that mix a Gaussian with the
// sharp picture (selective, tilt-shift, unsharp mask). All share one pass shape: a symmetric 1-D
// kernel with neighbouring taps merged into single bilinear fetches, horizontal then vertical.

/// A symmetric 1-D kernel as uniform arrays: `offsets` (pixels) and `weights` of merged taps, index
/// 0 the centre, and `count`. Declares `vec4 {{p}}blur(vec2 uv, vec2 axis)` over `{{p}}input`.
enum SeparableKernel {
    /// Merged taps per side the shader holds: kernels up to 96 pixels each side.
    static let maxPairs = 48
    static let maxRadius = 2 * maxPairs

    static let glsl = """
    uniform float {{p}}offsets[\(maxPairs + 1)];
    uniform float {{p}}weights[\(maxPairs + 1)];
    uniform float {{p}}count;
    vec4 {{p}}blur(vec2 uv, vec2 axis) {
        vec2 step = axis / {{p}}inputSize;
        vec4 sum = texture({{p}}input, uv) * {{p}}weights[0];
        for (int i = 1; i < int({{p}}count); i++) {
            vec2 d = step * {{p}}offsets[i];
            sum += (texture({{p}}input, uv + d) + texture({{p}}input, uv - d)) * {{p}}weights[i];
        }
        return sum;
    }
    """

    static let horizontal = "vec4 {{p}}run(vec2 uv) { return {{p}}blur(uv, vec2(1.0, 0.0)); }"
    static let vertical = "vec4 {{p}}run(vec2 uv) { return {{p}}blur(uv, vec2(0.0, 1.0)); }"
    /// The vertical pass of a masked blur: `{{p}}combine(sharp, blurred, uv)` picks the mix.
    static let verticalCombined = """
    vec4 {{p}}run(vec2 uv) { return {{p}}combine(texture({{p}}source, uv), {{p}}blur(uv, vec2(0.0, 1.0)), uv); }
    """

    /// `half[i]` is the weight at distance i (half[0] the centre); pairs (i, i+1) become one
    /// bilinear fetch at their weighted position, which linear filtering reproduces exactly.
    static func arrays(half: [Double]) -> [String: [Float]] {
        let r = min(half.count - 1, maxRadius)
        var offsets: [Float] = [0]
        var weights: [Float] = [Float(half[0])]
        var i = 1
        while i <= r {
            let a = half[i], b = i + 1 <= r ? half[i + 1] : 0
            offsets.append(a + b > 0 ? Float((Double(i) * a + Double(i + 1) * b) / (a + b)) : Float(i))
            weights.append(Float(a + b))
            i += 2
        }
        return ["offsets": offsets, "weights": weights, "count": [Float(offsets.count)]]
    }

    /// Normalised Gaussian half-kernel for a filter with `sigma` and `radius` parameters (as gaussianBlur).
    static func gaussian(_ f: FilterInstance) -> [String: [Float]] {
        let (sigma, radius) = GaussianBlurFilter.radius(f)
        var w = (0...radius).map { i in exp(-Double(i * i) / (2 * sigma * sigma)) }
        let total = w[0] + 2 * w[1...].reduce(0, +)
        w = w.map { $0 / total }
        return arrays(half: w)
    }

    static let gaussianParameters = { (sigma: Double, what: String) -> [ParameterDeclaration] in [
        .float("sigma", default: sigma, range: 0...32, "standard deviation of the \(what) Gaussian in pixels (GPUImage's blurRadiusInPixels; 0: radius / 3)"),
        .int("radius", default: 0, range: 0...maxRadius, "taps each side in pixels (0: 3 x sigma, rounded up)"),
    ] }

    static let gaussianCheck: @Sendable (FilterInstance) -> String? = { f in
        f.double("sigma") <= 0 && f.double("radius") <= 0 ? "give sigma or radius" : nil
    }

    /// GLSL smoothstep with a zero-width edge allowed (a step there; GLSL leaves it undefined).
    static let smoothstepHelper = """
    float {{p}}smooth(float e0, float e1, float x) {
        if (e1 <= e0) return x < e0 ? 0.0 : 1.0;
        return smoothstep(e0, e1, x);
    }
    """
}

/// A box (moving average) over 2 * radius + 1 pixels, horizontal then vertical: GPUImageBoxBlur,
/// with the radius taken as given (GPUImage rounds it to an even number of pixels).
public enum BoxBlurFilter {
    public static let declaration = FilterDeclaration(
        name: "boxBlur",
        summary: "Box blur: the mean of a (2 radius + 1)-pixel square, separable (horizontal then vertical pass).",
        category: .blur,
        parameters: [.int("radius", default: 2, range: 0...SeparableKernel.maxRadius, "pixels each side of the centre (GPUImage's blurRadiusInPixels)")],
        kind: .sampling(glsl: SeparableKernel.glsl, passes: [SeparableKernel.horizontal, SeparableKernel.vertical]),
        arrays: { f, _, _ in
            let r = max(0, Int(f.double("radius")))
            return SeparableKernel.arrays(half: Array(repeating: 1 / Double(2 * r + 1), count: r + 1))
        }
    )
}

/// GPUImageFastBlurFilter: the 9-tap kernel of rastergrid.com's "efficient Gaussian blur with linear
/// sampling" (row 12 of Pascal's triangle without its two outer entries each side:
/// 66, 220, 495, 792, 924, 792, 495, 220, 66 over 4070), applied `passes` times.
/// why: GPUImage runs the two passes `passes` times over 8-bit textures; we convolve the kernel
/// with itself `passes` times and run it once (two passes however many), which is the same blur
/// without the rounding between passes; only within 4 x passes pixels of the border, where
/// GPUImage re-clamps after every pass, do the two differ slightly.
public enum FastBlurFilter {
    static let kernel: [Double] = [66, 220, 495, 792, 924, 792, 495, 220, 66].map { $0 / 4070 }

    /// The full kernel (2 * 4 * passes + 1 taps) of `passes` applications.
    public static func kernel(passes: Int) -> [Double] {
        var k: [Double] = [1]
        for _ in 0..<max(1, passes) {
            var next = [Double](repeating: 0, count: k.count + kernel.count - 1)
            for (i, a) in k.enumerated() { for (j, b) in kernel.enumerated() { next[i + j] += a * b } }
            k = next
        }
        return k
    }

    public static let declaration = FilterDeclaration(
        name: "fastBlur",
        summary: "GPUImage's fast blur: a 9-tap near-Gaussian (binomial 66, 220, 495, 792, 924 / 4070) applied `passes` times, run as one separable pair of passes.",
        category: .blur,
        parameters: [.int("passes", default: 1, range: 1...10, "times the 9-tap kernel is applied (GPUImage's blurPasses); each adds about 1.4 pixels of sigma")],
        kind: .sampling(glsl: SeparableKernel.glsl, passes: [SeparableKernel.horizontal, SeparableKernel.vertical]),
        arrays: { f, _, _ in
            let k = kernel(passes: Int(f.double("passes")))
            return SeparableKernel.arrays(half: Array(k[(k.count / 2)...]))
        }
    )
}

/// GPUImageGaussianSelectiveBlurFilter: sharp inside a circle, blurred outside, with a smooth
/// ring between. GPUImage's aspectRatio parameter is the picture's own aspect here: distances
/// are in units of the picture's width in both directions, so the circle stays round.
/// why: GPUImage measures the centre's y in its aspect-squeezed coordinates; ours is a plain
/// fraction of the height, so (0.5, 0.5) is the same and other centres sit where they say.
public enum SelectiveBlurFilter {
    public static let declaration = FilterDeclaration(
        name: "selectiveBlur",
        summary: "Gaussian blur outside a clear circle (GPUImage's GaussianSelectiveBlur); radii are fractions of the picture width.",
        category: .blur,
        parameters: SeparableKernel.gaussianParameters(5, "outside") + [
            .float("excludeCircleRadius", default: 60.0 / 320, range: 0...2, "radius of the sharp circle, as a fraction of the width"),
            .vec2("excludeCirclePoint", default: [0.5, 0.5], range: -1...2, "centre of the circle, as fractions of width and height (top-left origin)"),
            .float("excludeBlurSize", default: 30.0 / 320, range: 0...2, "width of the ring, inside the radius, over which sharp turns to blurred (fraction of the width)"),
        ],
        kind: .sampling(glsl: SeparableKernel.glsl + SeparableKernel.smoothstepHelper + """
        uniform float {{p}}excludeCircleRadius;
        uniform vec2 {{p}}excludeCirclePoint;
        uniform float {{p}}excludeBlurSize;
        vec4 {{p}}combine(vec4 sharp, vec4 blurred, vec2 uv) {
            vec2 d = (uv - {{p}}excludeCirclePoint) * vec2(1.0, {{p}}sourceSize.y / {{p}}sourceSize.x);
            float r = {{p}}excludeCircleRadius;
            return mix(sharp, blurred, {{p}}smooth(r - {{p}}excludeBlurSize, r, length(d)));
        }
        """, passes: [SeparableKernel.horizontal, SeparableKernel.verticalCombined]),
        check: SeparableKernel.gaussianCheck,
        arrays: { f, _, _ in SeparableKernel.gaussian(f) }
    )
}

/// GPUImageTiltShiftFilter: a sharp horizontal band between two heights, blurring above and below.
public enum TiltShiftFilter {
    public static let declaration = FilterDeclaration(
        name: "tiltShift",
        summary: "Simulated tilt-shift lens: sharp between topFocusLevel and bottomFocusLevel, Gaussian-blurred beyond with a smoothstep fall-off (GPUImage's TiltShift).",
        category: .blur,
        parameters: SeparableKernel.gaussianParameters(7, "out-of-focus") + [
            .float("topFocusLevel", default: 0.4, range: 0...1, "top of the sharp band, as a fraction of the height from the top"),
            .float("bottomFocusLevel", default: 0.6, range: 0...1, "bottom of the sharp band (below topFocusLevel's value is an error)"),
            .float("focusFallOffRate", default: 0.2, range: 0...1, "height (fraction of the picture) over which sharp turns fully blurred"),
        ],
        kind: .sampling(glsl: SeparableKernel.glsl + SeparableKernel.smoothstepHelper + """
        uniform float {{p}}topFocusLevel;
        uniform float {{p}}bottomFocusLevel;
        uniform float {{p}}focusFallOffRate;
        vec4 {{p}}combine(vec4 sharp, vec4 blurred, vec2 uv) {
            float t = 1.0 - {{p}}smooth({{p}}topFocusLevel - {{p}}focusFallOffRate, {{p}}topFocusLevel, uv.y)
                + {{p}}smooth({{p}}bottomFocusLevel, {{p}}bottomFocusLevel + {{p}}focusFallOffRate, uv.y);
            return mix(sharp, blurred, clamp(t, 0.0, 1.0));
        }
        """, passes: [SeparableKernel.horizontal, SeparableKernel.verticalCombined]),
        check: { f in
            if let m = SeparableKernel.gaussianCheck(f) { return m }
            return f.double("topFocusLevel") > f.double("bottomFocusLevel") ? "topFocusLevel must not be below bottomFocusLevel" : nil
        },
        arrays: { f, _, _ in SeparableKernel.gaussian(f) }
    )
}

/// Unsharp mask: source + (source - blurred) x intensity.
/// why: GPUImageUnsharpMaskFilter's shader computes source x intensity + blurred x (1 - intensity),
/// so its documented default of 1 ("strength of the sharpening, from 0.0 on up") leaves the
/// picture unchanged; we follow the documentation (and Core Image's CIUnsharpMask): 0 is no
/// change, and our intensity i is GPUImage's i + 1.
public enum UnsharpMaskFilter {
    public static let declaration = FilterDeclaration(
        name: "unsharpMask",
        summary: "Unsharp mask: source + (source - Gaussian blur) x intensity (intensity 0 leaves the picture; GPUImage's shader value is ours + 1).",
        category: .blur,
        parameters: SeparableKernel.gaussianParameters(4, "mask's") + [
            .float("intensity", default: 1, range: 0...10, "strength of the sharpening: 0 none, 1 adds the full difference from the blur"),
        ],
        kind: .sampling(glsl: SeparableKernel.glsl + """
        uniform float {{p}}intensity;
        vec4 {{p}}combine(vec4 sharp, vec4 blurred, vec2 uv) {
            return vec4(sharp.rgb + (sharp.rgb - blurred.rgb) * {{p}}intensity, sharp.a);
        }
        """, passes: [SeparableKernel.horizontal, SeparableKernel.verticalCombined]),
        check: SeparableKernel.gaussianCheck,
        arrays: { f, _, _ in SeparableKernel.gaussian(f) }
    )
}
