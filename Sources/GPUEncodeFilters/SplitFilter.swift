// Before/after views: two pictures divided by a line. Comparisons (`--compare`) put the original
// (or a second preset) in the overlay and the preset in the base; a keyframed position is a wipe.

/// The overlay on one side of a straight line through the picture, the base on the other, and a
/// thin divider on the line. The line is perpendicular to the direction `angle` (0: a vertical
/// line, overlay on the left; 90: a horizontal line, overlay on top; 45: a diagonal, overlay top-left),
/// and `position` runs along that direction over the whole picture, corner to corner, so 0 shows
/// only the base and 1 only the overlay at any angle.
public enum SplitFilter {
    public static let declaration = FilterDeclaration(
        name: "split",
        summary: "Before/after: the overlay on one side of a line through the picture, the base on the other, with a thin divider (comparisons and wipes; keyframe position to sweep it).",
        category: .blend,
        parameters: [
            .float("position", default: 0.5, range: 0...1,
                   "where the line crosses, as a fraction of the picture along the angle's direction: 0 shows only the base, 1 only the overlay"),
            .float("angle", default: 0, range: -360...360,
                   "the line's angle in degrees: 0 vertical (overlay left, base right), 90 horizontal (overlay on top), 45 diagonal (overlay top-left)"),
            .float("lineWidth", default: 2, range: 0...100, "the divider's width in pixels; 0 draws none"),
            .color("lineColor", default: [1, 1, 1, 1], "the divider's colour; its alpha mixes it"),
        ],
        // Why a macro: a blend's function receives two colours but not the position, and the split
        // depends on it. The chain calls `{{p}}blend(c, overlay)` inside `{{p}}apply(vec4 c, vec2 uv)`,
        // so the macro hands that `uv` on; every render path (fused, packed, unfused) names it so.
        kind: .blend(glsl: """
        uniform float {{p}}position;
        uniform float {{p}}angle;
        uniform float {{p}}lineWidth;
        uniform vec4 {{p}}lineColor;
        vec4 {{p}}split(vec4 base, vec4 overlay, vec2 uv) {
            float a = radians({{p}}angle);
            // y grows downwards in uv, so 90 degrees points down and the overlay is on top.
            vec2 n = vec2(cos(a), sin(a));
            vec2 middle = 0.5 * outSize;
            // Half the picture's extent along n: the line sweeps from corner to corner.
            float reach = abs(n.x) * middle.x + abs(n.y) * middle.y;
            float d = dot(uv * outSize - middle, n) - (2.0 * {{p}}position - 1.0) * reach;
            vec3 rgb = d < 0.0 ? mix(base.rgb, overlay.rgb, overlay.a) : base.rgb;
            // Coverage of the pixel by the divider: crisp at whole widths, no divider at the ends.
            float cover = clamp(0.5 * {{p}}lineWidth - abs(d) + 0.5, 0.0, 1.0);
            if ({{p}}lineWidth <= 0.0 || {{p}}position <= 0.0 || {{p}}position >= 1.0) cover = 0.0;
            return vec4(mix(rgb, {{p}}lineColor.rgb, cover * {{p}}lineColor.a), base.a);
        }
        #define {{p}}blend(base, overlay) {{p}}split(base, overlay, uv)
        """)
    )
}
