// Filters that recolour the picture as a whole: inversion, tinting by luminance, haze.

public enum ColorInvertFilter {
    public static let declaration = FilterDeclaration(
        name: "colorInvert",
        summary: "Inverts R, G and B (1 - c), keeping alpha.",
        glsl: """
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(1.0 - c.rgb, c.a); }
        """
    )
}

/// GPUImageMonochromeFilter: the luminance (Rec. 709 weights) overlaid with the colour, per
/// channel (2ab below 0.5, 1 - 2(1-a)(1-b) above), mixed with the original by intensity.
public enum MonochromeFilter {
    public static let declaration = FilterDeclaration(
        name: "monochrome",
        summary: "Tones the picture with one colour: its luminance is overlay-blended with color, mixed with the original by intensity.",
        parameters: [
            .color("color", default: [0.6, 0.45, 0.3, 1], "the tone (alpha is ignored)"),
            .float("intensity", default: 1, range: 0...1, "0 keeps the original, 1 is fully toned"),
        ],
        glsl: """
        uniform vec4 {{p}}color;
        uniform float {{p}}intensity;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec3 l = vec3(dot(c.rgb, vec3(0.2125, 0.7154, 0.0721)));
            vec3 k = {{p}}color.rgb;
            vec3 toned = mix(2.0 * l * k, 1.0 - 2.0 * (1.0 - l) * (1.0 - k), step(0.5, l));
            return vec4(mix(c.rgb, toned, {{p}}intensity), c.a);
        }
        """
    )
}

public enum FalseColorFilter {
    public static let declaration = FilterDeclaration(
        name: "falseColor",
        summary: "Maps luminance (Rec. 709 weights) onto a ramp from firstColor (black) to secondColor (white).",
        parameters: [
            .color("firstColor", default: [0, 0, 0.5, 1], "the colour dark areas become (alpha is ignored)"),
            .color("secondColor", default: [1, 0, 0, 1], "the colour light areas become (alpha is ignored)"),
        ],
        glsl: """
        uniform vec4 {{p}}firstColor;
        uniform vec4 {{p}}secondColor;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float l = dot(c.rgb, vec3(0.2125, 0.7154, 0.0721));
            return vec4(mix({{p}}firstColor.rgb, {{p}}secondColor.rgb, l), c.a);
        }
        """
    )
}

/// GPUImageHazeFilter: removes (positive distance) or adds (negative) a white haze whose strength
/// d = distance + slope * y varies down the picture (y = 0 at the top): (c - d) / (1 - d).
/// GPUImage applies the formula to alpha too, which leaves opaque pixels opaque; we keep alpha as
/// it is so that translucent pictures keep theirs.
public enum HazeFilter {
    public static let declaration = FilterDeclaration(
        name: "haze",
        summary: "Removes (distance > 0) or adds (distance < 0) white haze, (c - d) / (1 - d) with d = distance + slope * y (y from 0 at the top to 1 at the bottom).",
        parameters: [
            .float("distance", default: 0.2, range: -0.3...0.3, "strength of the haze removed at the top (negative adds haze)"),
            .float("slope", default: 0, range: -0.3...0.3, "change of strength from top to bottom"),
        ],
        glsl: """
        uniform float {{p}}distance;
        uniform float {{p}}slope;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float d = {{p}}distance + {{p}}slope * uv.y;
            return vec4((c.rgb - d) / (1.0 - d), c.a);
        }
        """
    )
}
