// Edges, stylising and distortions: GPUImage's "visual effect" filters. The edge filters live in
// EdgeFilters.swift and the distortions in DistortionFilters.swift; this file has the family
// list and the rest (posterize, the pixellations, crosshatch, Kuwahara, vignette).

public enum StylizeFilters {
    public static let all: [FilterDeclaration] = [
        SobelEdgeDetectionFilter.declaration,
        SketchFilter.declaration,
        ToonFilter.declaration,
        SmoothToonFilter.declaration,
        PosterizeFilter.declaration,
        PixellateFilter.declaration,
        PolarPixellateFilter.declaration,
        PolkaDotFilter.declaration,
        HalftoneFilter.declaration,
        CrosshatchFilter.declaration,
        EmbossFilter.declaration,
        KuwaharaFilter.declaration,
        VignetteFilter.declaration,
        SwirlFilter.declaration,
        BulgeFilter.declaration,
        PinchFilter.declaration,
        StretchFilter.declaration,
        SphereRefractionFilter.declaration,
        GlassSphereFilter.declaration,
    ]
}

public enum PosterizeFilter {
    public static let declaration = FilterDeclaration(
        name: "posterize",
        summary: "Rounds each colour channel to colorLevels steps: floor(c * levels + 0.5) / levels (GPUImage's Posterize; alpha kept).",
        category: .stylize,
        parameters: [.int("colorLevels", default: 10, range: 1...256, "number of levels per channel")],
        // why: GPUImage rounds alpha as well; alpha is no colour, and video's is 1 anyway.
        glsl: """
        uniform int {{p}}colorLevels;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float levels = float(max({{p}}colorLevels, 1));
            return vec4(floor(c.rgb * levels + 0.5) / levels, c.a);
        }
        """
    )
}

/// GPUImage's square cells: fractionalWidthOfAPixel of the width on both axes (its
/// `fractionalWidthOfPixel / aspectRatio` for the height), at least one pixel, laid from the top left.
enum CellGLSL {
    static let uniforms = "uniform float {{p}}fractionalWidthOfAPixel;\n"
    static let cells = """
    float {{p}}cellWidth() { return max({{p}}fractionalWidthOfAPixel, 1.0 / {{p}}inputSize.x); }
    vec2 {{p}}cellSize() { return {{p}}cellWidth() * vec2(1.0, {{p}}inputSize.x / {{p}}inputSize.y); }
    vec2 {{p}}cellCentre(vec2 uv) { vec2 d = {{p}}cellSize(); return uv - mod(uv, d) + 0.5 * d; }
    // Distance between two texture coordinates in fractions of the width.
    float {{p}}widthDistance(vec2 a, vec2 b) {
        return length(vec2(a.x - b.x, (a.y - b.y) * {{p}}inputSize.y / {{p}}inputSize.x));
    }
    """
    /// The cells in integers, for the filters that decide inside or outside a dot (needs
    /// `ExactDecisionGLSL.helpers`): positions in units of 1 / `{{p}}perPixel()` pixel (the largest power
    /// of two with W * perPixel <= 65536, so every product below stays within 32 bits), the cell's
    /// side an even number of units. `{{p}}exactCell(p)`: (the cell centre, the pixel centre's offset
    /// from it) for pixel p along both axes; `{{p}}cellLuma(centre)`: the luminance at the centre as an
    /// 8-bit code, interpolated from its four pixels with weights in 1/256 (as a GPU's bilinear
    /// sampling weighs them), rounded half up at each step.
    static let exactCells = """
    int {{p}}perPixel() {
        int k = 4;
        for (int i = 0; i < 14; i++) { if (2 * k * int({{p}}inputSize.x) <= 65536) k *= 2; }
        return k;
    }
    int {{p}}side() {
        float pixels = max({{p}}fractionalWidthOfAPixel, 1.0 / {{p}}inputSize.x) * {{p}}inputSize.x;
        return 2 * max(1, int(roundEven(pixels * float({{p}}perPixel() / 2))));
    }
    ivec4 {{p}}exactCell(ivec2 p) {
        int u = {{p}}perPixel();
        int side = {{p}}side();
        ivec2 at = p * u + u / 2;
        ivec2 centre = (at / side) * side + side / 2;
        return ivec4(centre, at - centre);
    }
    int {{p}}lumaAt(ivec2 p) { return {{p}}lumaUnits(texelFetch({{p}}input, clamp(p, ivec2(0), ivec2({{p}}inputSize) - 1), 0).rgb); }
    int {{p}}cellLuma(ivec2 centre) {
        int u = {{p}}perPixel();
        ivec2 base = centre - u / 2;
        ivec2 i = base / u;
        ivec2 f = (base - i * u) * 256 / u;
        int top = ((256 - f.x) * {{p}}lumaAt(i) + f.x * {{p}}lumaAt(i + ivec2(1, 0)) + 128) >> 8;
        int bottom = ((256 - f.x) * {{p}}lumaAt(i + ivec2(0, 1)) + f.x * {{p}}lumaAt(i + ivec2(1, 1)) + 128) >> 8;
        int l = ((256 - f.y) * top + f.y * bottom + 128) >> 8;
        return (l + 5000) / 10000;
    }
    // Whether offset d lies within (side / 2) * scale / 255 of the centre: 255² d² <= ((side / 2) scale)².
    bool {{p}}withinDot(ivec2 d, int scale) {
        return {{p}}notBelow({{p}}square({{p}}side() / 2 * scale), {{p}}sumOfSquares(255 * d.x, 255 * d.y));
    }

    """
    static let widthParameter = ParameterDeclaration.float(
        "fractionalWidthOfAPixel", default: 0.05, range: 0...1, "cell size as a fraction of the width (at least one pixel)")
}

public enum PixellateFilter {
    public static let declaration = FilterDeclaration(
        name: "pixellate",
        summary: "Square blocks of one colour each, the colour at the block's centre (GPUImage's Pixellate; aspect ratio from the picture).",
        category: .stylize,
        parameters: [CellGLSL.widthParameter],
        kind: .sampling(glsl: CellGLSL.uniforms + CellGLSL.cells, passes: ["""
        vec4 {{p}}run(vec2 uv) { return texture({{p}}input, {{p}}cellCentre(uv)); }
        """])
    )
}

public enum PolarPixellateFilter {
    public static let declaration = FilterDeclaration(
        name: "polarPixellate",
        summary: "Pixellation in polar coordinates about center: rings and sectors of one colour each (GPUImage's PolarPixellate).",
        category: .stylize,
        parameters: [
            .vec2("center", default: [0.5, 0.5], range: -1...2, "centre, as fractions of width and height from the top left"),
            .vec2("pixelSize", default: [0.05, 0.05], range: 0.0001...6.3,
                  "ring width (in GPUImage's -1...1 coordinates) and sector angle (radians)"),
        ],
        // GPUImage's coordinates: 2 * uv - 1 about the centre, no aspect ratio, and its 0.03 added
        // to the ring radius (so the centre of the picture is not sampled at the centre point).
        kind: .sampling(glsl: """
        uniform vec2 {{p}}center;
        uniform vec2 {{p}}pixelSize;
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            vec2 n = 2.0 * (uv - {{p}}center);
            vec2 size = max({{p}}pixelSize, vec2(1e-4));
            float r = length(n);
            float phi = atan(n.y, n.x);
            r = r - mod(r, size.x) + 0.03;
            phi = phi - mod(phi, size.y);
            return texture({{p}}input, 0.5 * r * vec2(cos(phi), sin(phi)) + {{p}}center);
        }
        """])
    )
}

public enum PolkaDotFilter {
    public static let declaration = FilterDeclaration(
        name: "polkaDot",
        summary: "Round dots on black in a square grid, each the colour at its cell's centre (GPUImage's PolkaDot; aspect ratio from the picture).",
        category: .stylize,
        parameters: [
            CellGLSL.widthParameter,
            .float("dotScaling", default: 0.9, range: 0...1, "dot diameter as a fraction of the cell"),
        ],
        // Inside or outside a dot is decided in integers (`CellGLSL.exactCells`, dotScaling to 1/255),
        // so every renderer draws the same dots. (The colour is GPUImage's, sampled at the cell's
        // centre in float: a colour, not a decision, it differs between renderers as little as any.)
        kind: .sampling(glsl: CellGLSL.uniforms + "uniform float {{p}}dotScaling;\n" + CellGLSL.cells + ExactDecisionGLSL.helpers + CellGLSL.exactCells, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec4 cell = {{p}}exactCell(ivec2(uv * {{p}}inputSize));
            vec4 c = texture({{p}}input, {{p}}cellCentre(uv));
            bool inside = {{p}}withinDot(cell.zw, int(roundEven(clamp({{p}}dotScaling, 0.0, 1.0) * 255.0)));
            return vec4(inside ? c.rgb : vec3(0.0), c.a);
        }
        """])
    )
}

public enum HalftoneFilter {
    public static let declaration = FilterDeclaration(
        name: "halftone",
        summary: "Newsprint halftone: black dots on white in a square grid, larger where the cell's centre is darker (GPUImage's Halftone; aspect ratio from the picture).",
        category: .stylize,
        // GPUImage's code default is 0.01 (its README says 0.05).
        parameters: [.float("fractionalWidthOfAPixel", default: 0.01, range: 0...1,
                            "cell size as a fraction of the width (at least one pixel)")],
        // Decided in integers (`CellGLSL.exactCells`), so every renderer draws the same dots: the dot's
        // radius is half the cell times the darkness of the centre's luminance as an 8-bit code.
        kind: .sampling(glsl: CellGLSL.uniforms + ExactDecisionGLSL.helpers + CellGLSL.exactCells, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec4 cell = {{p}}exactCell(ivec2(uv * {{p}}inputSize));
            bool inside = {{p}}withinDot(cell.zw, 255 - {{p}}cellLuma(cell.xy));
            return vec4(vec3(inside ? 0.0 : 1.0), 1.0);
        }
        """])
    )
}

/// A point filter: it needs only the pixel's own colour and position, so it fuses with its
/// neighbours in the chain (GPUImage runs it as a pass of its own).
public enum CrosshatchFilter {
    public static let declaration = FilterDeclaration(
        name: "crosshatch",
        summary: "Black-and-white crosshatch: up to four sets of diagonal lines, more of them where the luminance is darker (GPUImage's Crosshatch).",
        category: .stylize,
        parameters: [
            .float("crossHatchSpacing", default: 0.03, range: 0...1, "line spacing in texture coordinates (at least one pixel of the width)"),
            .float("lineWidth", default: 0.003, range: 0...1, "line width in texture coordinates"),
        ],
        // Decided in integers (ExactDecisions.swift), so every renderer draws the same lines: the
        // luminance in exact units, positions in units of 1 / (2 W H k) of the texture coordinates
        // (where every pixel centre's uv.x ± uv.y lies exactly), the spacing and width taken to that
        // grid (k makes it fine: some 2^27 units across the two coordinates).
        glsl: """
        uniform float {{p}}crossHatchSpacing;
        uniform float {{p}}lineWidth;
        """ + ExactDecisionGLSL.helpers + """
        // Whether v mod m (m > 0, v of any sign) is at most w.
        bool {{p}}onLine(int v, int m, int w) {
            if (v < 0) v += m * (-v / m + 1);
            return v % m <= w;
        }
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            int luma = {{p}}lumaUnits(c.rgb);
            ivec2 size = ivec2(outSize);
            ivec2 p = ivec2(uv * outSize);
            // uv.x + uv.y and uv.x - uv.y of the pixel's centre in units of 1 / (2 W H k), k the largest
            // power of two with 2 W H k <= 2^27 (so twice a sum stays within 32 bits).
            int k = 1;
            for (int i = 0; i < 27; i++) { if (4 * size.x * size.y * k <= 134217728) k *= 2; }
            int sum = ((2 * p.x + 1) * size.y + (2 * p.y + 1) * size.x) * k;
            int difference = ((2 * p.x + 1) * size.y - (2 * p.y + 1) * size.x) * k;
            float grid = float(2 * size.x * size.y * k);
            int s = int(roundEven(max({{p}}crossHatchSpacing, 1.0 / outSize.x) * grid));
            int w = int(floor({{p}}lineWidth * grid));
            // Luminance below 1, 0.75, 0.5, 0.3; the last two sets half a spacing along (in half units).
            bool line = (luma < 2550000 && {{p}}onLine(sum, s, w))
                || (luma < 1912500 && {{p}}onLine(difference, s, w))
                || (luma < 1275000 && {{p}}onLine(2 * sum - s, 2 * s, 2 * w))
                || (luma < 765000 && {{p}}onLine(2 * difference - s, 2 * s, 2 * w));
            return line ? vec4(0.0, 0.0, 0.0, 1.0) : vec4(1.0);
        }
        """
    )
}

/// GPUImage's Kuwahara (after Kyprianidis et al.): the mean of whichever of the four
/// (radius + 1)^2 quadrants around the pixel has the least colour variance. The choice is made in
/// integers (ExactDecisions.swift): n² times each variance, n Σk² - (Σk)² over the 8-bit codes k, is
/// exact, so quadrants of equal or nearly equal variance are chosen alike on every renderer (the
/// first of equals, as GPUImage's strict comparison takes it).
public enum KuwaharaFilter {
    /// why: each pixel reads (2r + 1)^2 texels (289 at 8), which is already seconds a frame for
    /// HD on a software renderer; GPUImage itself calls the filter best kept to still images.
    public static let maxRadius = 8

    public static let declaration = FilterDeclaration(
        name: "kuwahara",
        summary: "Oil-painting abstraction: each pixel becomes the mean of its least varied quadrant (GPUImage's Kuwahara; slow, radius up to \(maxRadius)).",
        category: .stylize,
        parameters: [.int("radius", default: 3, range: 1...maxRadius, "quadrant size in pixels out from the centre; larger is more abstract and much slower")],
        // why: GPUImage steps by a fixed 1/768 x 1/1024 of the texture whatever its size; the
        // definition (and this filter) steps by one pixel.
        kind: .sampling(glsl: "uniform int {{p}}radius;\n" + ExactDecisionGLSL.helpers, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 p = ivec2(uv * {{p}}inputSize);
            ivec2 last = ivec2({{p}}inputSize) - 1;
            int r = clamp({{p}}radius, 0, \(maxRadius));
            ivec3 m[4] = ivec3[4](ivec3(0), ivec3(0), ivec3(0), ivec3(0));
            ivec3 s[4] = ivec3[4](ivec3(0), ivec3(0), ivec3(0), ivec3(0));
            for (int j = -r; j <= r; j++) {
                for (int i = -r; i <= r; i++) {
                    ivec3 c = {{p}}codes(texelFetch({{p}}input, clamp(p + ivec2(i, j), ivec2(0), last), 0).rgb);
                    ivec3 cc = c * c;
                    // Quadrants in GPUImage's order: top left, top right, bottom right, bottom left.
                    if (j <= 0 && i <= 0) { m[0] += c; s[0] += cc; }
                    if (j <= 0 && i >= 0) { m[1] += c; s[1] += cc; }
                    if (j >= 0 && i >= 0) { m[2] += c; s[2] += cc; }
                    if (j >= 0 && i <= 0) { m[3] += c; s[3] += cc; }
                }
            }
            int n = (r + 1) * (r + 1);
            // n² times the variance summed over the channels (at most 3 · 81 · 81 · 255² / 4: 32 bits hold it).
            int best = -1;
            vec3 result = vec3(0.0);
            for (int q = 0; q < 4; q++) {
                ivec3 v = n * s[q] - m[q] * m[q];
                int sigma2 = v.r + v.g + v.b;
                if (best < 0 || sigma2 < best) { best = sigma2; result = vec3(m[q]) / (255.0 * float(n)); }
            }
            return vec4(result, 1.0);
        }
        """])
    )
}

public enum VignetteFilter {
    public static let declaration = FilterDeclaration(
        name: "vignette",
        summary: "Fades to color towards the edges: a smoothstep from start to end of the distance from center in texture coordinates (GPUImage's Vignette; color's alpha scales it).",
        category: .stylize,
        parameters: [
            .vec2("center", default: [0.5, 0.5], range: -1...2, "centre, as fractions of width and height from the top left"),
            .color("color", default: [0, 0, 0, 1], "the colour faded to (its alpha: how far)"),
            .float("start", default: 0.3, range: 0...1.5, "distance from center where the fade starts, in texture coordinates"),
            .float("end", default: 0.75, range: 0...1.5, "distance where it is complete"),
        ],
        // why: GLSL's smoothstep is undefined for start >= end; written out, start == end is a hard edge.
        glsl: """
        uniform vec2 {{p}}center;
        uniform vec4 {{p}}color;
        uniform float {{p}}start;
        uniform float {{p}}end;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float t = clamp((distance(uv, {{p}}center) - {{p}}start) / max({{p}}end - {{p}}start, 1e-6), 0.0, 1.0);
            t = t * t * (3.0 - 2.0 * t);
            return vec4(mix(c.rgb, {{p}}color.rgb, t * {{p}}color.a), c.a);
        }
        """
    )
}
