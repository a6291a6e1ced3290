// Two-input blends. The base is the chain so far; the overlay is the filter's `with` input (a
// colour, a generator or an image) at the same position. Modes follow ISO 32000-1 (PDF 1.7)
// section 11.3.5, composited as the PDF does over an opaque backdrop:
//   result = (1 - a) * base + a * B(base, overlay),   a = overlay alpha * opacity,
// and every blend keeps the base's alpha (the video stays opaque). GPUImage's shaders differ in
// places (their own overlay, soft light, colour burn and alpha handling); docs/blends.md lists
// where, since the Core Image recipes rely on the ISO definitions.

public enum BlendFilters {
    public static let all: [FilterDeclaration] = [
        blend("normal", "The overlay over the base (source-over).", "cs", affineInBase: { cs in (0, cs) }),
        blend("multiply", "base x overlay: darkens; white leaves the base unchanged.", "cb * cs", affineInBase: { cs in (cs, 0) }),
        blend("screen", "1 - (1 - base)(1 - overlay): lightens; black leaves the base unchanged.", "cb + cs - cb * cs",
              affineInBase: { cs in (1 - cs, cs) }),
        blend("overlay", "Multiplies or screens by the base: hardLight with the inputs swapped (ISO 32000; GPUImage's differs with alpha).",
              "{{p}}hardLight(cs, cb)", helpers: hardLightGLSL),
        blend("darken", "The darker of base and overlay, per channel.", "min(cb, cs)"),
        blend("lighten", "The lighter of base and overlay, per channel.", "max(cb, cs)"),
        blend("colorDodge", "Brightens the base to reflect the overlay: min(1, base / (1 - overlay)) (ISO 32000-1: an overlay of 1 gives 1).",
              "{{p}}dodge(cb, cs)", helpers: """
              vec3 {{p}}dodge(vec3 cb, vec3 cs) {
                  // cs = 1 is its own case in ISO 32000-1 (1, even over black); max() only keeps the division finite.
                  return mix(min(vec3(1.0), cb / max(1.0 - cs, 1e-6)), vec3(1.0), greaterThanEqual(cs, vec3(1.0)));
              }
              """),
        blend("colorBurn", "Darkens the base to reflect the overlay: 1 - min(1, (1 - base) / overlay) (ISO 32000-1: an overlay of 0 gives 0).",
              "{{p}}burn(cb, cs)", helpers: """
              vec3 {{p}}burn(vec3 cb, vec3 cs) {
                  return mix(1.0 - min(vec3(1.0), (1.0 - cb) / max(cs, 1e-6)), vec3(0.0), lessThanEqual(cs, vec3(0.0)));
              }
              """),
        blend("hardLight", "Multiplies (overlay <= 0.5) or screens (overlay > 0.5) by twice the overlay, like a harsh spotlight.",
              "{{p}}hardLight(cb, cs)", helpers: hardLightGLSL),
        blend("softLight", "Darkens or lightens by the overlay, like a diffuse spotlight (ISO 32000's D(x) formula, not GPUImage's).",
              "{{p}}softLight(cb, cs)", helpers: """
              vec3 {{p}}softLight(vec3 cb, vec3 cs) {
                  vec3 d = mix(sqrt(cb), ((16.0 * cb - 12.0) * cb + 4.0) * cb, lessThanEqual(cb, vec3(0.25)));
                  return mix(cb + (2.0 * cs - 1.0) * (d - cb), cb - (1.0 - 2.0 * cs) * cb * (1.0 - cb), lessThanEqual(cs, vec3(0.5)));
              }
              """),
        blend("difference", "|base - overlay|, per channel.", "abs(cb - cs)"),
        blend("exclusion", "base + overlay - 2 base overlay: like difference, lower in contrast.", "cb + cs - 2.0 * cb * cs"),
        blend("hueBlend", "The overlay's hue with the base's saturation and luminosity (ISO 32000 Hue; named apart from a hue adjustment).",
              "{{p}}setLum({{p}}setSat(cs, {{p}}sat(cb)), {{p}}lum(cb))", helpers: nonSeparableGLSL),
        blend("saturationBlend", "The overlay's saturation with the base's hue and luminosity (ISO 32000 Saturation; named apart from the saturation adjustment).",
              "{{p}}setLum({{p}}setSat(cb, {{p}}sat(cs)), {{p}}lum(cb))", helpers: nonSeparableGLSL),
        blend("colorBlend", "The overlay's hue and saturation with the base's luminosity (ISO 32000 Color): tints keeping the shading.",
              "{{p}}setLum(cs, {{p}}lum(cb))", helpers: nonSeparableGLSL),
        blend("luminosityBlend", "The overlay's luminosity with the base's hue and saturation (ISO 32000 Luminosity).",
              "{{p}}setLum(cb, {{p}}lum(cs))", helpers: nonSeparableGLSL),
        // GPUImage's modes outside ISO 32000. Its shaders take no opacity; ours do, composited as above.
        blend("add", "base + overlay, clipped at 1 (GPUImage's add blend; its alpha handling equals ours for a premultiplied overlay).",
              "cb + cs"),
        blend("subtract", "base - overlay, clipped at 0 (GPUImage's subtract blend, which ignores the overlay's alpha; ours weighs by it).",
              "cb - cs"),
        blend("divide", "base / overlay, clipped at 1; an overlay of 0 gives 1 (GPUImage's divide blend).", "{{p}}divide(cb, cs)",
              helpers: """
              vec3 {{p}}divide(vec3 cb, vec3 cs) {
                  // 0 / 0 is 1 (white) by our choice: GPUImage leaves it undefined.
                  return mix(min(vec3(1.0), cb / max(cs, 1e-6)), vec3(1.0), lessThanEqual(cs, vec3(0.0)));
              }
              """),
        blend("linearBurn", "base + overlay - 1, clipped at 0 (GPUImage's linear burn, which ignores the overlay's alpha; ours weighs by it).",
              "cb + cs - 1.0"),
        AlphaBlendFilter.declaration,
        DissolveBlendFilter.declaration,
        ChromaKeyBlendFilter.declaration,
        SplitFilter.declaration,
    ]

    /// A separable ISO 32000 blend mode given as `vec3` GLSL over `cb` (base) and `cs` (overlay);
    /// `helpers` may declare functions it uses (prefixed with {{p}}). The non-separable modes use it
    /// too: their formula is still a function of the two colours.
    /// `affineInBase`: for modes affine in the base `cb` once the overlay channel `cs` is fixed, the
    /// mode as `cb * scale + offset`: with a solid-colour overlay the whole blend is then an affine
    /// map of the base (`FilterDeclaration.affine`; the mode's clamp changes nothing for colours in 0...1).
    public static func blend(_ name: String, _ summary: String, _ formula: String, helpers: String = "",
                             affineInBase: (@Sendable (_ cs: Double) -> (scale: Double, offset: Double))? = nil) -> FilterDeclaration {
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
            """),
            affine: affineInBase.map { mode in
                { f, t in
                    guard let o = f.overlay.first, o.declaration.name == SolidColorFilter.declaration.name else { return nil }
                    let colour = o.numbers("color", at: t)
                    guard colour.count == 4 else { return nil }
                    let a = colour[3] * f.number("opacity", at: t)
                    var rows = [Double](repeating: 0, count: 12)
                    for i in 0..<3 {
                        let (scale, offset) = mode(colour[i])
                        rows[5 * i] = (1 - a) + a * scale
                        rows[4 * i + 3] = a * offset
                    }
                    return ColourAffine(rows: rows)
                }
            }
        )
    }

    /// ISO 32000's HardLight(cb, cs); Overlay(cb, cs) is HardLight(cs, cb).
    static let hardLightGLSL = """
    vec3 {{p}}hardLight(vec3 cb, vec3 cs) {
        vec3 s = 2.0 * cs - 1.0;
        return mix(cb + s - cb * s, cb * 2.0 * cs, lessThanEqual(cs, vec3(0.5)));
    }
    """

    /// ISO 32000's Lum, ClipColor, SetLum, Sat and SetSat (section 11.3.5.3), weights 0.3/0.59/0.11.
    static let nonSeparableGLSL = """
    float {{p}}lum(vec3 c) { return dot(c, vec3(0.3, 0.59, 0.11)); }
    vec3 {{p}}clipColor(vec3 c) {
        float l = {{p}}lum(c);
        float n = min(min(c.r, c.g), c.b);
        float x = max(max(c.r, c.g), c.b);
        if (n < 0.0) c = l + (c - l) * l / (l - n);
        if (x > 1.0) c = l + (c - l) * (1.0 - l) / (x - l);
        return c;
    }
    vec3 {{p}}setLum(vec3 c, float l) { return {{p}}clipColor(c + (l - {{p}}lum(c))); }
    float {{p}}sat(vec3 c) { return max(max(c.r, c.g), c.b) - min(min(c.r, c.g), c.b); }
    vec3 {{p}}setSat(vec3 c, float s) {
        // The maximum becomes s, the minimum 0 and the middle scales between: one expression for
        // the specification's sorted Cmax/Cmid/Cmin, and grey (no maximum) goes to black.
        float n = min(min(c.r, c.g), c.b);
        float x = max(max(c.r, c.g), c.b);
        return x > n ? (c - n) * s / (x - n) : vec3(0.0);
    }
    """
}

/// GPUImage's alpha blend: the overlay over the base by the overlay's alpha times `mix`.
public enum AlphaBlendFilter {
    public static let declaration = FilterDeclaration(
        name: "alpha",
        summary: "The overlay over the base, weighted by its alpha times mix (GPUImage's alpha blend).",
        category: .blend,
        parameters: [.float("mix", default: 1, range: 0...1, "how strongly the overlay replaces the base: 0 none, 1 by its full alpha")],
        kind: .blend(glsl: """
        uniform float {{p}}mix;
        vec4 {{p}}blend(vec4 base, vec4 overlay) {
            return vec4(mix(base.rgb, overlay.rgb, overlay.a * {{p}}mix), base.a);
        }
        """)
    )
}

/// GPUImage's dissolve: a cross-fade that ignores the overlay's alpha. GPUImage also fades the
/// alpha channel; here the base's alpha is kept, as in every blend, so video stays opaque.
public enum DissolveBlendFilter {
    public static let declaration = FilterDeclaration(
        name: "dissolve",
        summary: "Cross-fades to the overlay by mixturePercent, ignoring its alpha (GPUImage's dissolve blend).",
        category: .blend,
        parameters: [.float("mixturePercent", default: 0.5, range: 0...1, "0 is the base, 1 the overlay")],
        kind: .blend(glsl: """
        uniform float {{p}}mixturePercent;
        vec4 {{p}}blend(vec4 base, vec4 overlay) {
            return vec4(mix(base.rgb, overlay.rgb, {{p}}mixturePercent), base.a);
        }
        """)
    )
}

/// GPUImage's chroma key blend (after Apple's CIChromaKeyFilter sample): the *base* is keyed.
/// Distance in GPUImage's Cr/Cb plane from the key colour decides how much overlay shows.
public enum ChromaKeyBlendFilter {
    public static let declaration = FilterDeclaration(
        name: "chromaKey",
        summary: "Where the base (the video) is near colorToReplace, the overlay shows through: a green screen (GPUImage's chroma key blend).",
        category: .blend,
        parameters: [
            .float("thresholdSensitivity", default: 0.4, range: 0...1, "how close (Cr/Cb distance) a colour must be to the key to be replaced"),
            .float("smoothing", default: 0.1, range: 0...1, "width of the soft edge beyond the threshold"),
            .color("colorToReplace", default: [0, 1, 0, 1], "the key colour in the base (its alpha is ignored)"),
        ],
        kind: .blend(glsl: """
        uniform float {{p}}thresholdSensitivity;
        uniform float {{p}}smoothing;
        uniform vec4 {{p}}colorToReplace;
        vec2 {{p}}chroma(vec3 c) {
            float y = dot(c, vec3(0.2989, 0.5866, 0.1145));
            return vec2(0.7132 * (c.r - y), 0.5647 * (c.b - y));
        }
        vec4 {{p}}blend(vec4 base, vec4 overlay) {
            float d = distance({{p}}chroma(base.rgb), {{p}}chroma({{p}}colorToReplace.rgb));
            // smoothstep(e, e + 0, x) is undefined in GLSL; written out, smoothing 0 is a hard edge.
            float t = clamp((d - {{p}}thresholdSensitivity) / max({{p}}smoothing, 1e-6), 0.0, 1.0);
            float key = 1.0 - t * t * (3.0 - 2.0 * t);
            // Why overlay.a: a transparent part of the overlay (an image's border) leaves the base,
            // where GPUImage would make the output transparent. Same result for opaque overlays.
            return vec4(mix(base.rgb, overlay.rgb, key * overlay.a), base.a);
        }
        """)
    )
}
