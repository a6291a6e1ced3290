import Glibc

// Edge filters: GPUImage's 3x3 neighbourhood operations (Sobel, sketch, toon, emboss). Neighbours
// are read with texelFetch at clamped integer positions, which is what GPUImage's texel-offset
// coordinates with clamp-to-edge sampling read, without any bilinear rounding in between.

enum EdgeGLSL {
    /// `{{p}}at(p)`: the input pixel at integer position p, clamped to the picture;
    /// `{{p}}luma(p)`: its Rec. 709 luminance (GPUImage's W); `{{p}}sobel(uv)`: the Sobel gradient
    /// magnitude of the luminance around uv, unscaled.
    static let sobel = """
    vec4 {{p}}at(ivec2 p) {
        return texelFetch({{p}}input, clamp(p, ivec2(0), ivec2({{p}}inputSize) - 1), 0);
    }
    float {{p}}luma(ivec2 p) { return dot({{p}}at(p).rgb, vec3(0.2125, 0.7154, 0.0721)); }
    float {{p}}sobel(vec2 uv) {
        ivec2 p = ivec2(uv * {{p}}inputSize);
        float tl = {{p}}luma(p + ivec2(-1, -1)), t = {{p}}luma(p + ivec2(0, -1)), tr = {{p}}luma(p + ivec2(1, -1));
        float l = {{p}}luma(p + ivec2(-1, 0)), r = {{p}}luma(p + ivec2(1, 0));
        float bl = {{p}}luma(p + ivec2(-1, 1)), b = {{p}}luma(p + ivec2(0, 1)), br = {{p}}luma(p + ivec2(1, 1));
        float gy = -tl - 2.0 * t - tr + bl + 2.0 * b + br;
        float gx = -tl - 2.0 * l - bl + tr + 2.0 * r + br;
        return length(vec2(gx, gy));
    }
    """
}

/// GPUImage's Sobel edge detection: a greyscale pass then the 3x3 Sobel operator. Here the
/// luminance is taken per tap in the same pass (GPUImage rounds it to 8 bits in between).
public enum SobelEdgeDetectionFilter {
    public static let declaration = FilterDeclaration(
        name: "sobelEdgeDetection",
        summary: "Sobel edge detection: white edges on black, the gradient magnitude of the luminance (GPUImage's SobelEdgeDetection).",
        category: .stylize,
        parameters: [.float("edgeStrength", default: 1, range: 0...10, "multiplies the gradient magnitude; higher gives stronger (and sooner saturated) edges")],
        kind: .sampling(glsl: "uniform float {{p}}edgeStrength;\n" + EdgeGLSL.sobel, passes: ["""
        vec4 {{p}}run(vec2 uv) { return vec4(vec3({{p}}sobel(uv) * {{p}}edgeStrength), 1.0); }
        """])
    )
}

public enum SketchFilter {
    public static let declaration = FilterDeclaration(
        name: "sketch",
        summary: "Pencil-sketch look: the inverted Sobel edge magnitude of the luminance, dark edges on white (GPUImage's SketchFilter).",
        category: .stylize,
        parameters: [.float("edgeStrength", default: 1, range: 0...10, "multiplies the gradient magnitude; higher gives darker edges")],
        kind: .sampling(glsl: "uniform float {{p}}edgeStrength;\n" + EdgeGLSL.sobel, passes: ["""
        vec4 {{p}}run(vec2 uv) { return vec4(vec3(1.0 - {{p}}sobel(uv) * {{p}}edgeStrength), 1.0); }
        """])
    )
}

/// The toon pass shared by toon and smoothToon: black where the Sobel magnitude reaches the
/// threshold, elsewhere the colour posterized to quantizationLevels steps. The outline decision is
/// made in exact arithmetic (ExactDecisions.swift): the Sobel of the luminance in integer units of
/// 1/2550000 against the threshold, squared, so every renderer outlines the same pixels.
enum ToonGLSL {
    static let uniforms = """
    uniform float {{p}}threshold;
    uniform float {{p}}quantizationLevels;
    """
    /// After `EdgeGLSL.sobel` (it reads `{{p}}at`).
    static let decision = "\n" + ExactDecisionGLSL.helpers + """
    bool {{p}}outline(vec2 uv) {
        ivec2 p = ivec2(uv * {{p}}inputSize);
        int tl = {{p}}lumaUnits({{p}}at(p + ivec2(-1, -1)).rgb), t = {{p}}lumaUnits({{p}}at(p + ivec2(0, -1)).rgb);
        int tr = {{p}}lumaUnits({{p}}at(p + ivec2(1, -1)).rgb), l = {{p}}lumaUnits({{p}}at(p + ivec2(-1, 0)).rgb);
        int r = {{p}}lumaUnits({{p}}at(p + ivec2(1, 0)).rgb), bl = {{p}}lumaUnits({{p}}at(p + ivec2(-1, 1)).rgb);
        int b = {{p}}lumaUnits({{p}}at(p + ivec2(0, 1)).rgb), br = {{p}}lumaUnits({{p}}at(p + ivec2(1, 1)).rgb);
        return {{p}}reaches(-tl - 2 * l - bl + tr + 2 * r + br, -tl - 2 * t - tr + bl + 2 * b + br, {{p}}threshold);
    }
    """
    // why: GPUImage's toon shader takes the Sobel of the red channel alone, so edges between colours
    // of equal red (green against blue) get no outline; the luminance catches them all.
    static let pass = """
    vec4 {{p}}run(vec2 uv) {
        vec4 c = {{p}}at(ivec2(uv * {{p}}inputSize));
        float levels = max({{p}}quantizationLevels, 1.0);
        vec3 posterized = floor(c.rgb * levels + 0.5) / levels;
        float keep = {{p}}outline(uv) ? 0.0 : 1.0;
        return vec4(posterized * keep, c.a);
    }
    """
}

public enum ToonFilter {
    public static let declaration = FilterDeclaration(
        name: "toon",
        summary: "Cartoon look: black outlines where the Sobel edge magnitude reaches threshold, colours posterized (GPUImage's ToonFilter; edges from luminance, not GPUImage's red channel).",
        category: .stylize,
        parameters: [
            .float("threshold", default: 0.2, range: 0...1, "edge sensitivity: lower outlines more"),
            .float("quantizationLevels", default: 10, range: 1...256, "colour levels per channel"),
        ],
        kind: .sampling(glsl: ToonGLSL.uniforms + "\n" + EdgeGLSL.sobel + ToonGLSL.decision, passes: [ToonGLSL.pass])
    )
}

/// GPUImage's SmoothToonFilter: its Gaussian blur (sigma = blurRadiusInPixels, taps out to where
/// the weight falls below 1/256, rounded up to even, none below 1 pixel) and then the toon pass on
/// the blurred picture. why: GPUImage rounds blurRadiusInPixels to whole pixels; a fractional
/// sigma is kept here, since the weights are computed anyway. The blur is integer arithmetic, as
/// the outline decision is (ExactDecisions.swift): every tap read by itself (not merged into
/// bilinear fetches, whose 8-bit weights differ between GPUs), weights in 1/65536 summing to one
/// exactly (`integerTaps`), each pass's result rounded half up to 8-bit codes, so every renderer
/// blurs, and then outlines, alike.
public enum SmoothToonFilter {
    /// The Gaussian's weights for taps 0 ... radius in units of 1/65536: the outer ones rounded,
    /// the centre taking the rest, so the 2 radius + 1 taps sum to 65536.
    static func integerTaps(sigma: Double, radius: Int) -> [Int] {
        let r = max(0, radius)
        let w = (0...r).map { i in exp(-Double(i * i) / (2 * sigma * sigma)) }
        let total = w[0] + 2 * w[1...].reduce(0, +)
        var q = w.map { Int(($0 / total * 65536).rounded()) }
        q[0] = 65536 - 2 * q[1...].reduce(0, +)
        return q
    }

    /// One pass of the blur along `axis` (an ivec2).
    static let blurPass = { (axis: String) in """
    vec4 {{p}}run(vec2 uv) {
        ivec2 p = ivec2(uv * {{p}}inputSize);
        ivec2 last = ivec2({{p}}inputSize) - 1;
        ivec4 sum = int({{p}}taps[0]) * {{p}}codes4(texelFetch({{p}}input, p, 0));
        for (int i = 1; i <= int({{p}}radius); i++) {
            ivec4 pair = {{p}}codes4(texelFetch({{p}}input, clamp(p + \(axis) * i, ivec2(0), last), 0))
                + {{p}}codes4(texelFetch({{p}}input, clamp(p - \(axis) * i, ivec2(0), last), 0));
            sum += int({{p}}taps[i]) * pair;
        }
        return vec4((sum + 32768) >> 16) / 255.0;
    }
    """ }

    /// GPUImage's sample radius for a Gaussian of sigma `blurRadiusInPixels`.
    public static func sampleRadius(_ blurRadiusInPixels: Double) -> Int {
        guard blurRadiusInPixels >= 1 else { return 0 }
        let s = blurRadiusInPixels
        var r = Int((-2 * s * s * log(1.0 / 256 * (2 * Double.pi * s * s).squareRoot())).squareRoot().rounded(.down))
        r += r % 2
        return min(r, 2 * GaussianBlurFilter.maxPairs)
    }

    public static let declaration = FilterDeclaration(
        name: "smoothToon",
        summary: "Toon after a Gaussian blur that smooths noise away first (GPUImage's SmoothToonFilter; edges from luminance).",
        category: .stylize,
        parameters: [
            .float("blurRadiusInPixels", default: 2, range: 0...24, "sigma of the Gaussian blur in pixels (below 1: no blur)"),
            .float("threshold", default: 0.2, range: 0...1, "edge sensitivity: lower outlines more"),
            .float("quantizationLevels", default: 10, range: 1...256, "colour levels per channel"),
        ],
        kind: .sampling(glsl: """
        uniform float {{p}}taps[\(2 * GaussianBlurFilter.maxPairs + 1)];
        uniform float {{p}}radius;
        """ + ToonGLSL.uniforms + "\n" + EdgeGLSL.sobel + ToonGLSL.decision + """
        ivec4 {{p}}codes4(vec4 c) { return ivec4(floor(clamp(c, 0.0, 1.0) * 255.0 + 0.5)); }
        """,
        passes: [blurPass("ivec2(1, 0)"), blurPass("ivec2(0, 1)"), ToonGLSL.pass]),
        arrays: { f, _, _ in
            let sigma = f.double("blurRadiusInPixels")
            let radius = sampleRadius(sigma)
            return ["taps": integerTaps(sigma: max(sigma, 0.01), radius: radius).map(Float.init), "radius": [Float(radius)]]
        }
    )
}

/// GPUImage's EmbossFilter: its 3x3 convolution with the kernel
/// [-2i, -i, 0; -i, 1, i; 0, i, 2i] (top row over the pixels above), alpha kept.
public enum EmbossFilter {
    public static let declaration = FilterDeclaration(
        name: "emboss",
        summary: "Embossed relief: GPUImage's 3x3 convolution [-2i -i 0; -i 1 i; 0 i 2i] (top row over the row above), alpha kept.",
        category: .stylize,
        parameters: [.float("intensity", default: 1, range: 0...4, "strength of the relief (i in the kernel); 0 leaves the picture unchanged")],
        kind: .sampling(glsl: "uniform float {{p}}intensity;\n" + EdgeGLSL.sobel, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 p = ivec2(uv * {{p}}inputSize);
            float i = {{p}}intensity;
            vec4 centre = {{p}}at(p);
            vec3 sum = centre.rgb
                + i * (-2.0 * {{p}}at(p + ivec2(-1, -1)).rgb - {{p}}at(p + ivec2(0, -1)).rgb
                       - {{p}}at(p + ivec2(-1, 0)).rgb + {{p}}at(p + ivec2(1, 0)).rgb
                       + {{p}}at(p + ivec2(0, 1)).rgb + 2.0 * {{p}}at(p + ivec2(1, 1)).rgb);
            return vec4(sum, centre.a);
        }
        """])
    )
}
