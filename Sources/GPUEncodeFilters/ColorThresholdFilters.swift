// Thresholds: black or white from luminance (Rec. 709 weights, as GPUImage's), globally or
// against the local average.

public enum LuminanceThresholdFilter {
    public static let declaration = FilterDeclaration(
        name: "luminanceThreshold",
        summary: "White where luminance (Rec. 709 weights) is at least threshold, black elsewhere.",
        parameters: [.float("threshold", default: 0.5, range: 0...1, "the luminance at and above which a pixel turns white")],
        glsl: """
        uniform float {{p}}threshold;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            return vec4(vec3(step({{p}}threshold, dot(c.rgb, vec3(0.2125, 0.7154, 0.0721)))), c.a);
        }
        """
    )
}

/// GPUImageAdaptiveThresholdFilter: white where a pixel's luminance is at least its neighbourhood's
/// box-blurred luminance minus 0.05. GPUImage's box blur rounds the radius to an even number r and
/// averages 2r + 1 taps per axis, reading neighbouring pairs with one bilinear fetch each (at 1.5,
/// 3.5, ... pixels); so do we. Pass 1 takes luminance and blurs across, pass 2 blurs down (both
/// through the 8-bit intermediate textures, as GPUImage's), pass 3 compares with the source.
/// GPUImage writes its luminance to a texture first; we take it from the source directly, which
/// differs only by that 8-bit rounding. Output alpha is 1, as GPUImage's.
public enum AdaptiveThresholdFilter {
    /// Bilinear pairs per side the shader holds: radius up to 64 pixels.
    static let maxPairs = 32

    /// GPUImageBoxBlurFilter's radius: round(round(r / 2) * 2), at least 2.
    public static func radius(_ blurRadiusInPixels: Double) -> Int {
        max(2, min(2 * maxPairs, Int((blurRadiusInPixels / 2).rounded() * 2)))
    }

    static let blurPass = { (axis: String, channel: String) in """
    vec4 {{p}}run(vec2 uv) {
        vec2 step = \(axis) / {{p}}inputSize;
        float sum = \(channel)(texture({{p}}input, uv));
        for (int i = 0; i < int({{p}}pairs); i++) {
            vec2 d = step * (float(2 * i) + 1.5);
            sum += 2.0 * (\(channel)(texture({{p}}input, uv + d)) + \(channel)(texture({{p}}input, uv - d)));
        }
        return vec4(vec3(sum * {{p}}weight), 1.0);
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
        uniform float {{p}}weight;
        float {{p}}luma(vec4 c) { return dot(c.rgb, vec3(0.2125, 0.7154, 0.0721)); }
        float {{p}}red(vec4 c) { return c.r; }
        """, passes: [
            blurPass("vec2(1.0, 0.0)", "{{p}}luma"),
            blurPass("vec2(0.0, 1.0)", "{{p}}red"),
            """
            vec4 {{p}}run(vec2 uv) {
                float local = {{p}}luma(texelFetch({{p}}source, ivec2(uv * {{p}}sourceSize), 0));
                float background = texelFetch({{p}}input, ivec2(uv * {{p}}inputSize), 0).r;
                return vec4(vec3(step(background - 0.05, local)), 1.0);
            }
            """,
        ]),
        arrays: { f, _, _ in
            let r = radius(f.double("blurRadiusInPixels"))
            return ["pairs": [Float(r / 2)], "weight": [Float(1) / Float(2 * r + 1)]]
        }
    )
}
