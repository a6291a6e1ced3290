// Generators: pictures made from a position alone. They are point filters (they ignore the colour
// they are given), so a blend with one fuses into the chain's single pass.

public enum GeneratorFilters {
    public static let all: [FilterDeclaration] = [
        SolidColorFilter.declaration,
        LinearGradientFilter.declaration,
        RadialGradientFilter.declaration,
        ImageGeneratorFilter.declaration,
        LabelFilter.declaration,
        VideoInputFilter.declaration,
    ]
}

public enum SolidColorFilter {
    public static let declaration = FilterDeclaration(
        name: "solidColor",
        summary: "A flat colour (with alpha, for blends).",
        category: .generator,
        parameters: [.color("color", default: [0, 0, 0, 1], "the colour")],
        glsl: """
        uniform vec4 {{p}}color;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return {{p}}color; }
        """
    )
}

public enum LinearGradientFilter {
    public static let declaration = FilterDeclaration(
        name: "linearGradient",
        summary: "A linear ramp from color0 at point0 to color1 at point1 (normalised coordinates, top-left origin), constant beyond them (Core Image's CILinearGradient).",
        category: .generator,
        parameters: [
            .vec2("point0", default: [0.5, 0], range: -10...10, "where color0 is, as fractions of width and height"),
            .vec2("point1", default: [0.5, 1], range: -10...10, "where color1 is"),
            .color("color0", default: [1, 1, 1, 1], "the colour at point0"),
            .color("color1", default: [0, 0, 0, 1], "the colour at point1"),
        ],
        glsl: """
        uniform vec2 {{p}}point0;
        uniform vec2 {{p}}point1;
        uniform vec4 {{p}}color0;
        uniform vec4 {{p}}color1;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec2 d = ({{p}}point1 - {{p}}point0) * outSize;
            float t = clamp(dot((uv - {{p}}point0) * outSize, d) / max(dot(d, d), 1e-6), 0.0, 1.0);
            return mix({{p}}color0, {{p}}color1, t);
        }
        """
    )
}

/// Core Image's CIRadialGradient, with the centre as a fraction of the picture and the radii as
/// fractions of its shorter side (Core Image uses pixels), so a preset looks the same at any size.
public enum RadialGradientFilter {
    public static let declaration = FilterDeclaration(
        name: "radialGradient",
        summary: "color0 inside radius0, color1 beyond radius1, a linear ramp between (Core Image's CIRadialGradient; radii as fractions of the shorter side).",
        category: .generator,
        parameters: [
            .vec2("center", default: [0.5, 0.5], range: -10...10, "centre, as fractions of width and height"),
            .float("radius0", default: 0.25, range: 0...10, "inner radius, as a fraction of the shorter side"),
            .float("radius1", default: 0.5, range: 0...10, "outer radius, as a fraction of the shorter side"),
            .color("color0", default: [1, 1, 1, 1], "the colour inside radius0"),
            .color("color1", default: [0, 0, 0, 1], "the colour beyond radius1"),
        ],
        glsl: """
        uniform vec2 {{p}}center;
        uniform float {{p}}radius0;
        uniform float {{p}}radius1;
        uniform vec4 {{p}}color0;
        uniform vec4 {{p}}color1;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float side = min(outSize.x, outSize.y);
            float d = length((uv - {{p}}center) * outSize) / side;
            float t = clamp((d - {{p}}radius0) / max({{p}}radius1 - {{p}}radius0, 1e-6), 0.0, 1.0);
            if ({{p}}radius1 < {{p}}radius0) t = 1.0 - clamp((d - {{p}}radius1) / ({{p}}radius0 - {{p}}radius1), 0.0, 1.0);
            return mix({{p}}color0, {{p}}color1, t);
        }
        """
    )
}
