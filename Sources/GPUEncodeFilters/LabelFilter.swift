// Text on the picture, drawn on the GPU from the bitmap font in FontBitmap.swift: no font library,
// no system fonts, the same pixels everywhere. Comparisons and contact sheets name their sides and
// tiles with it; presets may use it for titles or a watermark.

/// A line (or lines) of text in a translucent box, placed at a corner, an edge's middle, the centre
/// or a given position. Each font pixel is `scale` x `scale` picture pixels, so the text stays crisp.
public enum LabelFilter {
    public static let corners = ["topLeft", "top", "topRight", "left", "center", "right", "bottomLeft", "bottom", "bottomRight", "position"]
    /// Longest text accepted (characters per line, and lines): the text is a texture this wide.
    public static let maxColumns = 512
    public static let maxLines = 64
    /// Font pixels of box around the text: left and right, top, bottom (the glyph's descender row
    /// already leaves room below).
    public static let padding = (x: 2, top: 2, bottom: 1)

    /// The automatic `scale`: one font pixel per 270 picture lines (4 at 1080p, 3 at 720p, 2 at 480p), at least 1.
    public static func automaticScale(height: Int) -> Int { max(1, Int((Double(height) / 270).rounded())) }

    /// The box around `text` in font pixels (multiply by the scale for picture pixels).
    public static func boxSize(_ text: String) -> (width: Int, height: Int) {
        let lines = splitLines(text)
        let columns = lines.map(\.count).max() ?? 0
        return (columns * BitmapFont.advance - 1 + 2 * padding.x, lines.count * BitmapFont.lineAdvance - 1 + padding.top + padding.bottom)
    }

    static func splitLines(_ text: String) -> [[Unicode.Scalar]] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.unicodeScalars) }
    }

    public static let declaration = FilterDeclaration(
        name: "label",
        summary: "Text in a translucent box, drawn with a built-in 5x8 pixel font (printable ASCII; other characters show as ?): titles, comparison and contact-sheet labels.",
        category: .generator,
        parameters: [
            ParameterDeclaration("text", .text, default: .string(""), "the text; \\n starts a new line; empty draws nothing"),
            .choice("corner", corners, default: "topLeft", "where the box goes: a corner, an edge's middle, the centre, or position"),
            .vec2("position", default: [0, 0], range: -1...2, "with corner position: the box's top-left corner, as fractions of width and height"),
            .float("margin", default: 2, range: 0...1000, "space between the box and the picture's edges, in font pixels"),
            .int("scale", default: 0, range: 0...64, "picture pixels per font pixel; 0 picks one from the picture's height (1 per 270 lines: 4 at 1080p, 3 at 720p)"),
            .color("color", default: [1, 1, 1, 1], "the text's colour"),
            .color("background", default: [0, 0, 0, 0.55], "the box's colour; its alpha is how much it covers (0: no box)"),
            .float("opacity", default: 1, range: 0...1, "fades the whole label (box and text)"),
        ],
        kind: .point(glsl: """
        uniform highp sampler2D {{p}}font;
        uniform highp sampler2D {{p}}text;
        uniform int {{p}}corner;
        uniform vec2 {{p}}position;
        uniform float {{p}}margin;
        uniform int {{p}}scale;
        uniform vec4 {{p}}color;
        uniform vec4 {{p}}background;
        uniform float {{p}}opacity;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            // The text texture: one texel per character (red: glyph index, alpha: a character is there).
            ivec2 grid = textureSize({{p}}text, 0);
            if (texelFetch({{p}}text, ivec2(0, 0), 0).a < 0.5 && grid.x == 1 && grid.y == 1) return c;
            float s = {{p}}scale > 0 ? float({{p}}scale) : max(1.0, floor(outSize.y / 270.0 + 0.5));
            vec2 box = vec2(float(grid.x * \(BitmapFont.advance) - 1 + \(2 * padding.x)),
                            float(grid.y * \(BitmapFont.lineAdvance) - 1 + \(padding.top + padding.bottom)));
            vec2 origin;
            if ({{p}}corner == \(corners.count - 1)) {
                origin = {{p}}position * outSize;
            } else {
                // Corners and edges: columns left/middle/right, rows top/middle/bottom.
                vec2 along = vec2(float({{p}}corner % 3), float({{p}}corner / 3)) * 0.5;
                vec2 inset = vec2({{p}}margin * s);
                origin = inset + (outSize - box * s - 2.0 * inset) * along;
            }
            origin = floor(origin + 0.5);
            // uv * outSize is the pixel's centre, so whole font pixels come out of the division.
            vec2 local = (uv * outSize - origin) / s;
            if (any(lessThan(local, vec2(0.0))) || any(greaterThanEqual(local, box))) return c;
            vec3 rgb = mix(c.rgb, {{p}}background.rgb, {{p}}background.a * {{p}}opacity);
            ivec2 f = ivec2(floor(local)) - ivec2(\(padding.x), \(padding.top));
            ivec2 cell = f / ivec2(\(BitmapFont.advance), \(BitmapFont.lineAdvance));
            ivec2 at = f - cell * ivec2(\(BitmapFont.advance), \(BitmapFont.lineAdvance));
            if (all(greaterThanEqual(f, ivec2(0))) && all(lessThan(cell, grid)) && at.x < \(BitmapFont.glyphWidth) && at.y < \(BitmapFont.glyphHeight)) {
                vec4 ch = texelFetch({{p}}text, cell, 0);
                int glyph = int(ch.r * 255.0 + 0.5);
                if (ch.a > 0.5 && texelFetch({{p}}font, ivec2(glyph * \(BitmapFont.glyphWidth) + at.x, at.y), 0).a > 0.5) {
                    rgb = mix(rgb, {{p}}color.rgb, {{p}}color.a * {{p}}opacity);
                }
            }
            return vec4(rgb, c.a);
        }
        """),
        resources: { f, _ in
            let lines = splitLines(f.string("text"))
            let columns = max(1, lines.map(\.count).max() ?? 0)
            var text = [UInt8](repeating: 0, count: columns * lines.count * 4)
            for (row, line) in lines.enumerated() {
                for (column, scalar) in line.enumerated() {
                    let i = (row * columns + column) * 4
                    text[i] = UInt8(BitmapFont.glyphIndex(scalar))
                    text[i + 3] = 255
                }
            }
            if f.string("text").isEmpty { text = [0, 0, 0, 0] }
            return [
                "font": .image2D(width: BitmapFont.atlasWidth, height: BitmapFont.glyphHeight, data: .bytes(BitmapFont.atlasRGBA), linear: false),
                "text": .image2D(width: f.string("text").isEmpty ? 1 : columns, height: f.string("text").isEmpty ? 1 : lines.count,
                                 data: .bytes(text), linear: false),
            ]
        },
        check: { f in
            let lines = splitLines(f.string("text"))
            if lines.count > maxLines { return "text has \(lines.count) lines; at most \(maxLines)" }
            if let long = lines.first(where: { $0.count > maxColumns }) { return "a line of text has \(long.count) characters; at most \(maxColumns)" }
            return nil
        }
    )
}
