import GPUEncodeKit
import XCTest

/// `label` and its bitmap font: the glyphs on the GPU are the bitmaps in FontBitmap.swift, placed
/// where the parameters say.
final class LabelTests: FilterTestCase {
    private let grey = RGBAImage(width: 120, height: 72) { x, y in (UInt8(60 + x), UInt8(100 + y), 90, 255) }

    private func label(_ text: String, _ values: [String: ParameterValue] = [:]) throws -> FilterInstance {
        var all: [String: ParameterValue] = ["text": .string(text), "color": .vector([1, 1, 1, 1]), "background": .vector([0, 0, 0, 1])]
        for (k, v) in values { all[k] = v }
        return try filter("label", all)
    }

    /// The reference picture of `text` written from the font's bitmaps: a box at `origin` (pixels)
    /// with 2 font pixels of padding left, right and on top and 1 below, characters every 6 font
    /// pixels and lines every 9, each font pixel `scale` x `scale` picture pixels.
    private func reference(_ text: String, origin: (Int, Int), scale s: Int, base: RGBAImage,
                           ink: RGBA = RGBA(1, 1, 1, 1), paper: RGBA = RGBA(0, 0, 0, 1)) -> (Int, Int) -> RGBA {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.unicodeScalars) }
        let columns = lines.map(\.count).max() ?? 0
        let boxW = columns * 6 - 1 + 4, boxH = lines.count * 9 - 1 + 3
        return { x, y in
            let fx = (x - origin.0), fy = (y - origin.1)
            guard fx >= 0, fy >= 0, fx < boxW * s, fy < boxH * s else { return TestImages.color(base, x, y) }
            let px = fx / s - 2, py = fy / s - 2
            guard px >= 0, py >= 0 else { return paper }
            let (column, cx) = (px / 6, px % 6), (row, cy) = (py / 9, py % 9)
            guard row < lines.count, column < lines[row].count, cx < 5, cy < 8 else { return paper }
            let scalar = lines[row][column]
            let glyph = (32...126).contains(scalar.value) ? Int(scalar.value) - 32 : Int(("?" as Unicode.Scalar).value) - 32
            return BitmapFont.isSet(glyph: glyph, x: cx, y: cy) ? ink : paper
        }
    }

    func testTheFontIsWhatWasDrawn() {
        // A few glyphs spelled out here, so the band layout in FontBitmap.swift is read correctly.
        func rows(_ c: Character) -> [String] {
            let g = Int(c.asciiValue!) - 32
            return (0..<8).map { y in String((0..<5).map { BitmapFont.isSet(glyph: g, x: $0, y: y) ? "#" : "." }) }
        }
        XCTAssertEqual(rows("A"), [".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#", "....."])
        XCTAssertEqual(rows("g"), [".....", ".....", ".####", "#...#", "#...#", ".####", "....#", ".###."])
        XCTAssertEqual(rows("~"), [".....", ".....", ".#...", "#.#.#", "...#.", ".....", ".....", "....."])
        XCTAssertEqual(rows(" "), Array(repeating: ".....", count: 8))
        // Every other glyph draws something, and no two are the same.
        var seen: Set<String> = []
        for g in 1..<BitmapFont.glyphCount {
            let bits = (0..<8).flatMap { y in (0..<5).map { BitmapFont.isSet(glyph: g, x: $0, y: y) ? "1" : "0" } }.joined()
            XCTAssertTrue(bits.contains("1"), "glyph \(UnicodeScalar(g + 32)!) is empty")
            XCTAssertTrue(seen.insert(bits).inserted, "glyph \(UnicodeScalar(g + 32)!) repeats another")
        }
    }

    func testEveryGlyphRendersItsBitmap() throws {
        // All of printable ASCII, 16 characters a line, at one picture pixel per font pixel.
        let all = String((32...126).map { Character(UnicodeScalar($0)!) })
        let text = stride(from: 0, to: all.count, by: 16).map { String(Array(all)[$0..<min($0 + 16, all.count)]) }.joined(separator: "\n")
        let out = try render([try label(text, ["scale": .int(1), "margin": .float(0)])], grey)
        assertMatches(out, tolerance: 0.001, "the font at scale 1", reference: reference(text, origin: (0, 0), scale: 1, base: grey))
    }

    func testScaledTextAtEachCorner() throws {
        let text = "Hi, q|p_"
        let (w, h) = (grey.width, grey.height)
        let s = 2, margin = 3
        let boxW = (text.count * 6 + 3) * s, boxH = 11 * s
        let m = margin * s
        let places: [(String, (Int, Int))] = [
            ("topLeft", (m, m)), ("topRight", (w - m - boxW, m)), ("bottomLeft", (m, h - m - boxH)),
            ("bottomRight", (w - m - boxW, h - m - boxH)), ("center", ((w - boxW) / 2, (h - boxH) / 2)),
        ]
        for (corner, origin) in places {
            let out = try render([try label(text, ["scale": .int(s), "margin": .float(Double(margin)), "corner": .string(corner)])], grey)
            assertMatches(out, tolerance: 0.001, corner, reference: reference(text, origin: origin, scale: s, base: grey))
        }
        let placed = try render([try label("xy", ["scale": .int(1), "corner": .string("position"), "position": .vector([0.5, 0.25])])], grey)
        assertMatches(placed, tolerance: 0.001, "at a position", reference: reference("xy", origin: (60, 18), scale: 1, base: grey))
    }

    func testAutomaticScaleColoursAndFallbacks() throws {
        // 480 lines: 2 picture pixels per font pixel.
        let tall = RGBAImage(width: 64, height: 480) { x, y in (UInt8(x), UInt8(y / 2), 40, 255) }
        let out = try render([try label("Ab", ["margin": .float(1)])], tall)
        assertMatches(out, tolerance: 0.001, "scale from the height", reference: reference("Ab", origin: (2, 2), scale: 2, base: tall))
        XCTAssertEqual(LabelFilter.automaticScale(height: 1080), 4)
        XCTAssertEqual(LabelFilter.automaticScale(height: 100), 1)
        // Characters outside ASCII show as ?.
        let accent = try render([try label("é", ["scale": .int(1), "margin": .float(0)])], grey)
        assertMatches(accent, tolerance: 0.001, "é as ?", reference: reference("?", origin: (0, 0), scale: 1, base: grey))
        // A translucent box mixes with the picture; the text's own colour is exact.
        let tinted = try render([try label("T", ["scale": .int(1), "margin": .float(0), "color": .vector([1, 0, 0, 1]),
                                                 "background": .vector([0, 0, 1, 0.5])])], grey)
        assertMatches(tinted, tolerance: 1, "colours") { x, y in
            let c = TestImages.color(self.grey, x, y)
            guard x < 9, y < 11 else { return c }
            let box = RGBA(c.rgb * 0.5 + SIMD3(0, 0, 1) * 0.5, 1)
            let (px, py) = (x - 2, y - 2)
            let ink = px >= 0 && py >= 0 && px < 5 && py < 8 && BitmapFont.isSet(glyph: Int(Character("T").asciiValue!) - 32, x: px, y: py)
            return ink ? RGBA(1, 0, 0, 1) : box
        }
        // No text, or no opacity, leaves the picture alone.
        for f in [try label(""), try label("hidden", ["opacity": .float(0)])] {
            assertMatches(try render([f], grey), tolerance: 0.001, "unchanged") { x, y in TestImages.color(self.grey, x, y) }
        }
    }

    func testLabelsFromAPreset() throws {
        let preset = try Preset.parse(json: #"""
        {"version": 1, "name": "t", "filters": [{"filter": "label", "text": "one\ntwo", "scale": 1, "margin": 0,
          "color": "#ffffff", "background": "#000000"}]}
        """#, origin: "/tmp/t.json")
        let out = try render(preset.filters, grey)
        assertMatches(out, tolerance: 0.001, "two lines", reference: reference("one\ntwo", origin: (0, 0), scale: 1, base: grey))
        XCTAssertThrowsError(try Preset.parse(json: """
        {"version": 1, "name": "t", "filters": [{"filter": "label", "text": "\(String(repeating: "x", count: 600))"}]}
        """, origin: "/tmp/t.json")) { XCTAssertTrue("\($0)".contains("at most 512"), "\($0)") }
    }
}
