import GPUEncodeCore

/// GPUImage's lookup image: 512 x 512, 8 x 8 tiles of 64 x 64. Tile (tx, ty) holds blue level
/// ty * 8 + tx of 64; within a tile red grows to the right and green downwards, so pixel (x, y)
/// of the identity image is (x mod 64, y mod 64, tile) scaled from 0...63 to 0...255.
public enum LookupImage {
    public static let size = 512
    public static let tile = 64

    /// The identity lookup image: the lookup filter with it changes nothing (up to rounding).
    public static func identity() -> RGBAImage {
        RGBAImage(width: size, height: size) { x, y in
            (level(x % tile), level(y % tile), level((y / tile) * 8 + x / tile), 255)
        }
    }

    /// Level i of 0...63 as an 8-bit value.
    public static func level(_ i: Int) -> UInt8 {
        UInt8((Double(i) * 255 / 63).rounded())
    }

    /// Decodes and checks a lookup image.
    public static func decode(_ bytes: [UInt8], name: String) throws -> RGBAImage {
        let image: RGBAImage
        do { image = try FilterMedia.required(for: name).decodePicture(bytes, name: name) } catch let e as GPUEncodeError {
            throw FilterError("\(name): \(e.message)")
        }
        guard image.width == size, image.height == size else {
            throw FilterError("\(name) is \(image.width)x\(image.height); a lookup image must be 512x512 (8x8 tiles of 64x64, as `gpuencode lut identity` writes)")
        }
        return image
    }
}

/// GPUImageLookupFilter: blue picks two neighbouring tiles (floor and ceil of blue * 63), red and
/// green a bilinear position inside each, inset half a pixel from the tile's edges; the two results
/// are mixed by the fraction of blue * 63. The lookup texture is sampled bilinearly as in GPUImage.
public enum LookupFilter {
    public static let declaration = FilterDeclaration(
        name: "lookup",
        summary: "Colour grade from a 512x512 lookup image (GPUImage's lookup filter: 8x8 tiles of 64x64, two-tile blue interpolation); `gpuencode lut identity` makes one to grade.",
        category: .lookup,
        parameters: [
            .file("image", extensions: ["png"], "the 512x512 lookup PNG"),
            .float("intensity", default: 1, range: 0...1, "0 keeps the original, 1 applies the lookup fully"),
        ],
        glsl: """
        uniform highp sampler2D {{p}}table;
        uniform float {{p}}intensity;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float blue = clamp(c.b, 0.0, 1.0) * 63.0;
            float b1 = floor(blue), b2 = ceil(blue);
            vec2 inTile = clamp(c.rg, 0.0, 1.0) * (0.125 - 1.0 / 512.0) + 0.5 / 512.0;
            vec2 p1 = vec2(b1 - 8.0 * floor(b1 / 8.0), floor(b1 / 8.0)) * 0.125 + inTile;
            vec2 p2 = vec2(b2 - 8.0 * floor(b2 / 8.0), floor(b2 / 8.0)) * 0.125 + inTile;
            vec3 graded = mix(texture({{p}}table, p1).rgb, texture({{p}}table, p2).rgb, blue - b1);
            return mix(c, vec4(graded, c.a), {{p}}intensity);
        }
        """,
        resources: { f, context in
            let path = f.string("image")
            guard !path.isEmpty else {
                throw FilterError("no lookup image: give \"image\": \"look.png\" (`gpuencode lut identity look.png` makes one to grade)")
            }
            let image = try LookupImage.decode(context.readFile(path, kind: .image), name: path)
            return ["table": .image2D(width: image.width, height: image.height, data: .bytes(image.pixels), linear: true)]
        }
    )
}
