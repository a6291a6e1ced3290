// Geometry: filters that move pixels around and may change the picture's size (`outputSize`).
// Exact moves (crop, flip, quarter turns) copy whole pixels with texelFetch; the others resample
// with bilinear `texture()`.

public enum GeometryFilters {
    public static let all: [FilterDeclaration] = [
        CropFilter.declaration,
        FlipFilter.declaration,
        Rotate90Filter.declaration,
        TransformFilter.declaration,
        ResizeFilter.declaration,
    ]
}

/// GPUImageCropFilter's cropRegion as four numbers. The region is snapped to whole pixels
/// (origin and size rounded), so a crop never resamples.
public enum CropFilter {
    /// The crop in whole pixels of a `w` x `h` input: origin and size, kept inside the picture.
    public static func region(_ f: FilterInstance, _ w: Int, _ h: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        func snap(_ v: Double, _ n: Int) -> Int { min(max(Int((v * Double(n)).rounded()), 0), n) }
        let x = min(snap(f.double("x"), w), w - 1), y = min(snap(f.double("y"), h), h - 1)
        let cw = min(max(1, snap(f.double("width"), w)), w - x), ch = min(max(1, snap(f.double("height"), h)), h - y)
        return (x, y, cw, ch)
    }

    public static let declaration = FilterDeclaration(
        name: "crop",
        summary: "Keeps a rectangle given as fractions of the picture (top-left origin, GPUImage's cropRegion); the output is that many pixels, rounded.",
        category: .geometry,
        parameters: [
            .float("x", default: 0, range: 0...1, "left edge, as a fraction of the width"),
            .float("y", default: 0, range: 0...1, "top edge, as a fraction of the height"),
            .float("width", default: 1, range: 0...1, "width, as a fraction of the picture's width"),
            .float("height", default: 1, range: 0...1, "height, as a fraction of the picture's height"),
        ],
        kind: .sampling(glsl: "uniform float {{p}}origin[2];\n", passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 at = ivec2(gl_FragCoord.xy) + ivec2(int({{p}}origin[0]), int({{p}}origin[1]));
            return texelFetch({{p}}input, clamp(at, ivec2(0), ivec2({{p}}inputSize) - 1), 0);
        }
        """]),
        outputSize: { w, h, f in let r = region(f, w, h); return (r.width, r.height) },
        check: { f in
            if f.double("width") <= 0 || f.double("height") <= 0 { return "width and height must be above 0" }
            if f.double("x") + f.double("width") > 1 + 1e-9 { return "x + width must not pass 1" }
            if f.double("y") + f.double("height") > 1 + 1e-9 { return "y + height must not pass 1" }
            return nil
        },
        arrays: { f, w, h in let r = region(f, w, h); return ["origin": [Float(r.x), Float(r.y)]] }
    )
}

public enum FlipFilter {
    public static let declaration = FilterDeclaration(
        name: "flip",
        summary: "Mirrors the picture left-right (horizontal) and/or upside down (vertical).",
        category: .geometry,
        parameters: [
            .bool("horizontal", default: true, "mirror left and right"),
            .bool("vertical", default: false, "mirror top and bottom"),
        ],
        kind: .sampling(glsl: """
        uniform bool {{p}}horizontal;
        uniform bool {{p}}vertical;
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 size = ivec2({{p}}inputSize);
            ivec2 at = ivec2(gl_FragCoord.xy);
            if ({{p}}horizontal) at.x = size.x - 1 - at.x;
            if ({{p}}vertical) at.y = size.y - 1 - at.y;
            return texelFetch({{p}}input, at, 0);
        }
        """])
    )
}

public enum Rotate90Filter {
    public static let declaration = FilterDeclaration(
        name: "rotate90",
        summary: "Turns the picture clockwise by quarter turns; odd turns swap width and height.",
        category: .geometry,
        parameters: [.int("turns", default: 1, range: 1...3, "quarter turns clockwise: 1 is 90 degrees, 2 is 180, 3 is 270 (90 anticlockwise)")],
        kind: .sampling(glsl: "uniform int {{p}}turns;\n", passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 size = ivec2({{p}}inputSize);
            ivec2 o = ivec2(gl_FragCoord.xy);
            ivec2 at;
            if ({{p}}turns == 1) at = ivec2(o.y, size.y - 1 - o.x);
            else if ({{p}}turns == 2) at = size - 1 - o;
            else at = ivec2(size.x - 1 - o.y, o.x);
            return texelFetch({{p}}input, at, 0);
        }
        """]),
        outputSize: { w, h, f in Int(f.double("turns")) % 2 == 1 ? (h, w) : (w, h) }
    )
}

/// A 2-D affine move about the picture's centre, in pixels (so rotation keeps shapes, as
/// GPUImageTransformFilter does by default): scale, then rotate, then translate.
public enum TransformFilter {
    public static let declaration = FilterDeclaration(
        name: "transform",
        summary: "Scales, rotates (clockwise, degrees) and moves the picture about its centre, bilinear; fill says what shows where the picture no longer covers.",
        category: .geometry,
        parameters: [
            .float("rotation", default: 0, range: -360...360, "degrees clockwise"),
            .vec2("scale", default: [1, 1], range: 0.01...100, "horizontal and vertical scale factors (before rotation)"),
            .vec2("translation", default: [0, 0], range: -10...10, "move right and down, as fractions of the width and height"),
            .choice("fill", ["black", "edge", "transparent"], default: "black",
                    "outside the picture: black (opaque black), edge (the nearest edge pixel repeated), transparent (alpha 0, for blends)"),
        ],
        kind: .sampling(glsl: """
        uniform float {{p}}rotation;
        uniform vec2 {{p}}scale;
        uniform vec2 {{p}}translation;
        uniform int {{p}}fill;
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            vec2 size = {{p}}inputSize;
            vec2 centre = 0.5 * size;
            float a = radians({{p}}rotation);
            // Inverse of p' = centre + translation + R(S(p - centre)); y points down, so R turns clockwise.
            vec2 d = gl_FragCoord.xy - centre - {{p}}translation * size;
            vec2 r = vec2(cos(a) * d.x + sin(a) * d.y, -sin(a) * d.x + cos(a) * d.y);
            vec2 p = centre + r / {{p}}scale;
            bool inside = all(greaterThanEqual(p, vec2(0.0))) && all(lessThan(p, size));
            if (!inside && {{p}}fill == 0) return vec4(0.0, 0.0, 0.0, 1.0);
            if (!inside && {{p}}fill == 2) return vec4(0.0);
            return texture({{p}}input, p / size);
        }
        """])
    )
}

/// Resizing to a width and height in pixels. The picture is resampled bilinearly; when it
/// shrinks by more than 2x along an axis, ceil(factor / 2) bilinear taps (up to 8) spread evenly
/// over each output pixel's footprint average it like a box filter instead of aliasing.
/// why: GPUImage stretched to the new size; `fit` (letterbox) is the default here.
public enum ResizeFilter {
    /// The output size and where the picture lands in it (output pixels, may pass the edges for fill).
    public static func layout(_ f: FilterInstance, _ w: Int, _ h: Int) -> (width: Int, height: Int, x: Double, y: Double, w: Double, h: Double) {
        var tw = Int(f.double("width")), th = Int(f.double("height"))
        if tw <= 0 && th <= 0 { tw = w; th = h }
        else if tw <= 0 { tw = max(1, Int((Double(th) * Double(w) / Double(h)).rounded())) }
        else if th <= 0 { th = max(1, Int((Double(tw) * Double(h) / Double(w)).rounded())) }
        let mode = f.string("mode")
        if mode == "stretch" { return (tw, th, 0, 0, Double(tw), Double(th)) }
        let sx = Double(tw) / Double(w), sy = Double(th) / Double(h)
        let s = mode == "fill" ? max(sx, sy) : min(sx, sy)
        // Whole pixels for the picture's size and offset, so letterbox bars have crisp edges.
        let cw = max(1, (Double(w) * s).rounded()), ch = max(1, (Double(h) * s).rounded())
        return (tw, th, ((Double(tw) - cw) / 2).rounded(.down), ((Double(th) - ch) / 2).rounded(.down), cw, ch)
    }

    static let maxTaps = 8

    public static let declaration = FilterDeclaration(
        name: "resize",
        summary: "Resizes to width x height pixels: fit (default) letterboxes with black to keep the aspect, fill crops to keep it, stretch distorts; bilinear, box-averaged when shrinking over 2x.",
        category: .geometry,
        parameters: [
            .int("width", default: 0, range: 0...16384, "output width in pixels (0: from height, keeping the aspect)"),
            .int("height", default: 0, range: 0...16384, "output height in pixels (0: from width, keeping the aspect)"),
            .choice("mode", ["fit", "fill", "stretch"], default: "fit",
                    "fit: all of the picture, black bars on two sides; fill: covers the frame, the overflow cropped; stretch: each axis scaled on its own"),
        ],
        kind: .sampling(glsl: """
        uniform float {{p}}rect[4];
        uniform float {{p}}taps[2];
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            vec2 origin = vec2({{p}}rect[0], {{p}}rect[1]);
            vec2 extent = vec2({{p}}rect[2], {{p}}rect[3]);
            vec2 q = (gl_FragCoord.xy - origin) / extent;
            if (any(lessThan(q, vec2(0.0))) || any(greaterThanEqual(q, vec2(1.0)))) return vec4(0.0, 0.0, 0.0, 1.0);
            // One output pixel spans `footprint` in texture coordinates; n taps sit at the centres of n equal parts.
            vec2 footprint = 1.0 / extent;
            int nx = int({{p}}taps[0]), ny = int({{p}}taps[1]);
            vec4 sum = vec4(0.0);
            for (int j = 0; j < \(maxTaps); j++) {
                if (j >= ny) break;
                for (int i = 0; i < \(maxTaps); i++) {
                    if (i >= nx) break;
                    vec2 t = (vec2(float(i), float(j)) + 0.5) / vec2(float(nx), float(ny)) - 0.5;
                    sum += texture({{p}}input, q + t * footprint);
                }
            }
            return sum / float(nx * ny);
        }
        """]),
        outputSize: { w, h, f in let l = layout(f, w, h); return (l.width, l.height) },
        arrays: { f, w, h in
            let l = layout(f, w, h)
            func taps(_ factor: Double) -> Float { Float(min(max(1, Int((factor / 2).rounded(.up))), maxTaps)) }
            return ["rect": [Float(l.x), Float(l.y), Float(l.w), Float(l.h)],
                    "taps": [taps(Double(w) / l.w), taps(Double(h) / l.h)]]
        }
    )
}
