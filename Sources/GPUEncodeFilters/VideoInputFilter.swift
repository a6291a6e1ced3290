import GPUEncodeCore

// A second video as a generator, mostly as a blend's `with` input (light leaks, film grain plates,
// a picture-in-picture clip). The still-picture counterpart is `image` (ImageGenerator.swift).

/// A movie placed over the frame like `image`, showing at each output frame the overlay frame whose
/// presentation interval contains the output's time (less `offset`), so overlays of any frame rate,
/// variable ones included, stay in step. The file is opened and its first frame decoded when the
/// preset loads (a missing file or one without video is a preset error with its line), then opened
/// again once per run by the renderer, which decodes forward (through `FilterMedia`: in GPUEncodeKit,
/// Pipeline/OverlayDecoder.swift).
public enum VideoInputFilter {
    /// File name endings taken as movies (in `file`, and a blend's `"with": "clip.mp4"`).
    public static let movieExtensions = ["mp4", "mov", "mkv", "webm", "m4v", "avi"]

    public static let declaration: FilterDeclaration = {
        var d = FilterDeclaration(
            name: "video",
            summary: "A second video fitted to the frame like image (fill, fit, stretch), the overlay frame shown at each output frame chosen by timestamp (variable frame rates work); loops or holds its last frame, starts after offset.",
            category: .generator,
            parameters: [
                .file("file", extensions: [], "the movie, relative to the preset file: any container FFmpeg reads (its best video stream)"),
                .choice("fill", ["fit", "fill", "stretch"], default: "fill",
                        "fill covers the frame keeping the aspect ratio and crops the excess; fit shows it whole with transparent borders; stretch ignores the aspect ratio"),
                .bool("loop", default: true, "start the overlay again when it ends; false holds its last frame"),
                .float("offset", default: 0, range: 0...86400, "seconds of output before the overlay's first frame; transparent until then"),
                .float("opacity", default: 1, range: 0...1, "multiplies the overlay's alpha"),
            ],
            kind: .point(glsl: glsl),
            resources: { f, context in
                // No still textures: this only checks the file when the preset loads.
                _ = try open(f, context)
                return [:]
            },
            check: { f in f.string("file").isEmpty ? "give the movie's file" : nil }
        )
        d.dynamic = { f, context in try open(f, context) }
        return d
    }()

    static func open(_ f: FilterInstance, _ context: ResourceContext) throws -> any DynamicSource {
        let path = f.string("file")
        guard !path.isEmpty else { throw FilterError("give the movie's file") }
        do {
            let checked = try context.checkedPath(path)
            return try FilterMedia.required(for: context.resolve(path)).openMovie(path: checked, loop: f["loop"] == .bool(true), offset: f.double("offset"))
        } catch let e as GPUEncodeError {
            throw FilterError(e.description)
        }
    }

    /// The image generator's placement and box filter, on a texture that is premultiplied RGBA8.
    static let glsl = """
    uniform highp sampler2D {{p}}frame;
    uniform int {{p}}fill;
    uniform float {{p}}opacity;
    vec4 {{p}}apply(vec4 c, vec2 uv) {
        vec2 size = vec2(textureSize({{p}}frame, 0));
        vec2 scale = outSize / size;
        if ({{p}}fill == 0) scale = vec2(min(scale.x, scale.y));
        if ({{p}}fill == 1) scale = vec2(max(scale.x, scale.y));
        vec2 t = 0.5 + (uv - 0.5) * outSize / (size * scale);
        if (any(lessThan(t, vec2(0.0))) || any(greaterThan(t, vec2(1.0)))) return vec4(0.0);
        // A large overlay shrunk with one bilinear fetch per pixel would alias: average n x n
        // fetches over the pixel's footprint, as image does.
        ivec2 n = clamp(ivec2(ceil(1.0 / scale - 1e-3)), 1, \(ImageGeneratorFilter.maxTaps));
        vec2 footprint = 1.0 / (size * scale);
        vec4 sum = vec4(0.0);
        for (int j = 0; j < \(ImageGeneratorFilter.maxTaps); j++) {
            if (j >= n.y) break;
            for (int i = 0; i < \(ImageGeneratorFilter.maxTaps); i++) {
                if (i >= n.x) break;
                vec2 offset = (vec2(float(i), float(j)) + 0.5) / vec2(n) - 0.5;
                sum += texture({{p}}frame, t + offset * footprint);
            }
        }
        sum /= float(n.x * n.y);
        return sum.a > 0.0 ? vec4(sum.rgb / sum.a, sum.a * {{p}}opacity) : vec4(0.0);
    }
    """
}
