// Two-input blends. The base is the chain so far; the overlay is the filter's `with` input (a
// colour, a generator or an image) at the same position. Separable modes follow ISO 32000-1
// (PDF 1.7) section 11.3.5, composited as the PDF does over an opaque backdrop:
//   result = (1 - a) * base + a * B(base, overlay),   a = overlay alpha * opacity.

public enum BlendFilters {
    public static let all: [FilterDeclaration] = [
        blend("normal", "The overlay over the base (source-over).", "cs"),
        blend("screen", "1 - (1 - base)(1 - overlay): lightens.", "cb + cs - cb * cs"),
    ]

    /// A separable ISO 32000 blend mode given as `vec3` GLSL over `cb` (base) and `cs` (overlay);
    /// `helpers` may declare functions it uses (prefixed with {{p}}).
    public static func blend(_ name: String, _ summary: String, _ formula: String, helpers: String = "") -> FilterDeclaration {
        FilterDeclaration(
            name: name, summary: summary, category: .blend,
            parameters: [.float("opacity", default: 1, range: 0...1, "how much of the blended result replaces the base (times the overlay's alpha)")],
            kind: .blend(glsl: """
            uniform float {{p}}opacity;
            \(helpers)
            vec3 {{p}}mode(vec3 cb, vec3 cs) { return \(formula); }
            vec4 {{p}}blend(vec4 base, vec4 overlay) {
                return vec4(mix(base.rgb, clamp({{p}}mode(base.rgb, overlay.rgb), 0.0, 1.0), overlay.a * {{p}}opacity), base.a);
            }
            """)
        )
    }
}
