import GPUEncodeCore

// A still picture as a generator, mostly as a blend's `with` input (a logo, a frame, a texture).

/// A PNG or JPEG file placed over the frame, keeping its alpha. The file is read and decoded once,
/// when the preset loads. Only stills: a second *video* input is not supported.
public enum ImageGeneratorFilter {
    /// Taps per axis at most when the picture is shrunk (so up to 8x8 texels average into a pixel).
    static let maxTaps = 8

    public static let declaration = FilterDeclaration(
        name: "image",
        summary: "A PNG/JPEG picture fitted to the frame (fill: cover and crop, fit: letterbox with transparent borders, stretch), keeping its alpha (a movie as an input is the video generator).",
        category: .generator,
        parameters: [
            .file("file", extensions: FilterMedia.pictureExtensions, "the picture, relative to the preset file"),
            .choice("fill", ["fit", "fill", "stretch"], default: "fill",
                    "fill covers the frame keeping the aspect ratio and crops the excess; fit shows it whole with transparent borders; stretch ignores the aspect ratio"),
        ],
        glsl: """
        uniform highp sampler2D {{p}}image;
        uniform int {{p}}fill;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec2 size = vec2(textureSize({{p}}image, 0));
            // Output pixels per picture pixel on each axis; fit and fill use one scale for both.
            vec2 scale = outSize / size;
            if ({{p}}fill == 0) scale = vec2(min(scale.x, scale.y));
            if ({{p}}fill == 1) scale = vec2(max(scale.x, scale.y));
            vec2 t = 0.5 + (uv - 0.5) * outSize / (size * scale);
            if (any(lessThan(t, vec2(0.0))) || any(greaterThan(t, vec2(1.0)))) return vec4(0.0);
            // Why several taps: shrinking a large picture with one bilinear fetch per pixel
            // aliases (there are no mipmaps), so average n x n fetches spread over the pixel's
            // footprint, n = texels per pixel rounded up (exact box averaging at whole ratios).
            ivec2 n = clamp(ivec2(ceil(1.0 / scale - 1e-3)), 1, \(maxTaps));
            vec2 footprint = 1.0 / (size * scale);
            vec4 sum = vec4(0.0);
            for (int j = 0; j < \(maxTaps); j++) {
                if (j >= n.y) break;
                for (int i = 0; i < \(maxTaps); i++) {
                    if (i >= n.x) break;
                    vec2 offset = (vec2(float(i), float(j)) + 0.5) / vec2(n) - 0.5;
                    sum += texture({{p}}image, t + offset * footprint);
                }
            }
            sum /= float(n.x * n.y);
            // The texture holds premultiplied colour, so edges against transparency do not
            // darken when filtered; hand back straight colour as every generator does.
            return sum.a > 0.0 ? vec4(sum.rgb / sum.a, sum.a) : vec4(0.0);
        }
        """,
        resources: { f, context in
            let path = f.string("file")
            guard !path.isEmpty else { throw FilterError("give the picture's file") }
            let picture: RGBAImage
            do {
                let bytes = try context.readFile(path, kind: .image)
                picture = try FilterMedia.required(for: context.resolve(path)).decodePicture(bytes, name: context.resolve(path))
            } catch let e as GPUEncodeError {
                throw FilterError(e.description)
            }
            // Premultiplied, in half floats so faint alpha keeps its colour precision.
            let p = picture.pixels
            var data = [Float](repeating: 0, count: p.count)
            for i in stride(from: 0, to: p.count, by: 4) {
                let a = Float(p[i + 3]) / 255
                data[i] = Float(p[i]) / 255 * a
                data[i + 1] = Float(p[i + 1]) / 255 * a
                data[i + 2] = Float(p[i + 2]) / 255 * a
                data[i + 3] = a
            }
            return ["image": .image2D(width: picture.width, height: picture.height, data: .floats(data), linear: true)]
        },
        check: { f in f.string("file").isEmpty ? "give the picture's file" : nil }
    )
}
