// Small fixed neighbourhoods: GPUImage's 4-neighbour sharpen, the 3x3 median and the 9-tap
// bilateral blur.

/// GPUImageSharpenFilter: centre x (1 + 4 sharpness) - sharpness x (left + right + up + down).
public enum SharpenFilter {
    public static let declaration = FilterDeclaration(
        name: "sharpen",
        summary: "GPUImage's sharpen: c (1 + 4s) - s (left + right + above + below), the 4 nearest neighbours; negative s softens.",
        category: .blur,
        parameters: [.float("sharpness", default: 0, range: -4...4, "0 unchanged; positive sharpens, negative blurs")],
        kind: .sampling(glsl: """
        uniform float {{p}}sharpness;
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            vec2 dx = vec2(1.0 / {{p}}inputSize.x, 0.0);
            vec2 dy = vec2(0.0, 1.0 / {{p}}inputSize.y);
            vec4 c = texture({{p}}input, uv);
            vec3 around = texture({{p}}input, uv - dx).rgb + texture({{p}}input, uv + dx).rgb
                + texture({{p}}input, uv - dy).rgb + texture({{p}}input, uv + dy).rgb;
            return vec4(c.rgb * (1.0 + 4.0 * {{p}}sharpness) - around * {{p}}sharpness, c.a);
        }
        """])
    )
}

/// GPUImageMedianFilter: each of R, G and B is the median of its 9 values over the 3x3 square
/// (channels independently, so the result may be a colour none of the pixels had).
/// why: GPUImage writes alpha 1; we keep the centre's alpha.
public enum MedianFilter {
    public static let declaration = FilterDeclaration(
        name: "median",
        summary: "3x3 median of R, G and B separately (GPUImage's Median): removes speckles and keeps edges.",
        category: .blur,
        kind: .sampling(glsl: """
        void {{p}}sort2(inout vec3 a, inout vec3 b) { vec3 lo = min(a, b); b = max(a, b); a = lo; }
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 size = ivec2({{p}}inputSize);
            ivec2 at = ivec2(uv * {{p}}inputSize);
            vec3 p[9];
            for (int j = 0; j < 3; j++) {
                for (int i = 0; i < 3; i++) {
                    ivec2 q = clamp(at + ivec2(i - 1, j - 1), ivec2(0), size - 1);
                    p[j * 3 + i] = texelFetch({{p}}input, q, 0).rgb;
                }
            }
            // Paeth's 19-exchange median-of-9 network: p[4] ends up the median of each channel.
            {{p}}sort2(p[1], p[2]); {{p}}sort2(p[4], p[5]); {{p}}sort2(p[7], p[8]);
            {{p}}sort2(p[0], p[1]); {{p}}sort2(p[3], p[4]); {{p}}sort2(p[6], p[7]);
            {{p}}sort2(p[1], p[2]); {{p}}sort2(p[4], p[5]); {{p}}sort2(p[7], p[8]);
            {{p}}sort2(p[0], p[3]); {{p}}sort2(p[5], p[8]); {{p}}sort2(p[4], p[7]);
            {{p}}sort2(p[3], p[6]); {{p}}sort2(p[1], p[4]); {{p}}sort2(p[2], p[5]);
            {{p}}sort2(p[4], p[7]); {{p}}sort2(p[4], p[2]); {{p}}sort2(p[6], p[4]);
            {{p}}sort2(p[4], p[2]);
            return vec4(p[4], texelFetch({{p}}input, at, 0).a);
        }
        """])
    )
}

/// GPUImageBilateralFilter: GPUImage's 9-tap Gaussian (0.05, 0.09, 0.12, 0.15, 0.18, ...) along
/// each axis in turn, every tap but the centre weighted down by its RGBA distance from the centre
/// colour: w x (1 - min(distance x distanceNormalizationFactor, 1)), the sum divided by the weights.
public enum BilateralFilter {
    public static let weights: [Double] = [0.05, 0.09, 0.12, 0.15, 0.18, 0.15, 0.12, 0.09, 0.05]

    static let pass = { (axis: String) in """
    vec4 {{p}}run(vec2 uv) {
        vec2 step = \(axis) * {{p}}texelSpacingMultiplier / {{p}}inputSize;
        vec4 centre = texture({{p}}input, uv);
        vec4 sum = centre * {{p}}w[4];
        float total = {{p}}w[4];
        for (int i = 0; i < 9; i++) {
            if (i == 4) continue;
            vec4 s = texture({{p}}input, uv + step * float(i - 4));
            float w = {{p}}w[i] * (1.0 - min(distance(centre, s) * {{p}}distanceNormalizationFactor, 1.0));
            sum += s * w;
            total += w;
        }
        return sum / total;
    }
    """ }

    public static let declaration = FilterDeclaration(
        name: "bilateral",
        summary: "GPUImage's bilateral blur: a 9-tap Gaussian per axis that ignores neighbours whose colour is far from the centre's, so edges stay sharp.",
        category: .blur,
        parameters: [
            .float("distanceNormalizationFactor", default: 8, range: 0...100, "colour distance scale: a neighbour further than 1 / this from the centre colour gets no weight; 0 is a plain Gaussian"),
            .float("texelSpacingMultiplier", default: 4, range: 0...16, "pixels between the 9 taps (reach is 4 x this each side)"),
        ],
        kind: .sampling(glsl: """
        uniform float {{p}}distanceNormalizationFactor;
        uniform float {{p}}texelSpacingMultiplier;
        const float {{p}}w[9] = float[9](\(weights.map { String($0) }.joined(separator: ", ")));
        """, passes: [pass("vec2(1.0, 0.0)"), pass("vec2(0.0, 1.0)")])
    )
}
