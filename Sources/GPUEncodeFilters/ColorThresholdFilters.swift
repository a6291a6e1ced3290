// Thresholds: black or white from luminance (Rec. 709 weights, as GPUImage's), globally or
// against the local average.

public enum LuminanceThresholdFilter {
    public static let declaration = FilterDeclaration(
        name: "luminanceThreshold",
        summary: "White where luminance (Rec. 709 weights) is at least threshold, black elsewhere.",
        parameters: [.float("threshold", default: 0.5, range: 0...1, "the luminance at and above which a pixel turns white")],
        // Decided in exact arithmetic on the 8-bit codes (ExactDecisions.swift).
        glsl: """
        uniform float {{p}}threshold;
        """ + ExactDecisionGLSL.helpers + """
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            return vec4(vec3(float({{p}}lumaUnits(c.rgb)) >= {{p}}units({{p}}threshold) ? 1.0 : 0.0), c.a);
        }
        """
    )
}

/// GPUImageAdaptiveThresholdFilter: white where a pixel's luminance is at least its neighbourhood's
/// box-blurred luminance minus 0.05. GPUImage's box blur rounds the radius to an even number r and
/// averages 2r + 1 taps per axis; so do we. Pass 1 takes luminance and blurs across, pass 2 blurs
/// down (both stored as 8-bit codes, as GPUImage's 8-bit intermediate textures hold them), pass 3
/// compares with the source. GPUImage writes its luminance to a texture first; we take it from the
/// source directly, which differs only by that 8-bit rounding. Output alpha is 1, as GPUImage's.
/// Every step is integer arithmetic (ExactDecisions.swift): each tap read by itself (GPUImage reads
/// pairs with one bilinear fetch, whose 8-bit weights differ between GPUs), sums of luminance units,
/// averages rounded half up, and the comparison in luminance units, so every renderer decides alike.
public enum AdaptiveThresholdFilter {
    /// Pairs of taps per side (GPUImage reads each pair with one fetch): radius up to 64 pixels.
    static let maxPairs = 32

    /// GPUImageBoxBlurFilter's radius: round(round(r / 2) * 2), at least 2.
    public static func radius(_ blurRadiusInPixels: Double) -> Int {
        max(2, min(2 * maxPairs, Int((blurRadiusInPixels / 2).rounded() * 2)))
    }

    /// A box of 2r + 1 taps along `axis` (an ivec2) of `units` (GLSL of an int from a texel `t`), the
    /// average rounded half up to a code at `scale` units per code.
    static let blurPass = { (axis: String, units: String, scale: Int) in """
    vec4 {{p}}run(vec2 uv) {
        ivec2 p = ivec2(uv * {{p}}inputSize);
        ivec2 last = ivec2({{p}}inputSize) - 1;
        int r = 2 * int({{p}}pairs);
        int sum = 0;
        for (int i = -r; i <= r; i++) {
            vec4 t = texelFetch({{p}}input, clamp(p + \(axis) * i, ivec2(0), last), 0);
            sum += \(units);
        }
        int n = 2 * r + 1;
        int code = (2 * sum + \(scale) * n) / (2 * \(scale) * n);
        return vec4(vec3(float(code) / 255.0), 1.0);
    }
    """ }

    public static let declaration = FilterDeclaration(
        name: "adaptiveThreshold",
        summary: "GPUImage's adaptive threshold: white where luminance is at least the local box-blurred luminance minus 0.05, black elsewhere.",
        category: .color,
        parameters: [
            .float("blurRadiusInPixels", default: 4, range: 1...64,
                   "radius of the local average in pixels, rounded to an even number as GPUImage's box blur (2r + 1 taps per axis)"),
        ],
        kind: .sampling(glsl: """
        uniform float {{p}}pairs;
        """ + ExactDecisionGLSL.helpers, passes: [
            blurPass("ivec2(1, 0)", "{{p}}lumaUnits(t.rgb)", 10000),
            blurPass("ivec2(0, 1)", "{{p}}codes(t.rgb).r", 1),
            """
            vec4 {{p}}run(vec2 uv) {
                int local = {{p}}lumaUnits(texelFetch({{p}}source, ivec2(uv * {{p}}sourceSize), 0).rgb);
                int background = {{p}}codes(texelFetch({{p}}input, ivec2(uv * {{p}}inputSize), 0).rgb).r;
                // luminance >= background / 255 - 0.05, in units of 1/2550000.
                return vec4(vec3(local >= 10000 * background - 127500 ? 1.0 : 0.0), 1.0);
            }
            """,
        ]),
        arrays: { f, _, _ in
            let r = radius(f.double("blurRadiusInPixels"))
            return ["pairs": [Float(r / 2)]]
        }
    )
}
