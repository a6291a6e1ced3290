import Foundation
import GPUEncodeKit
import XCTest

/// lookup against GPUImageLookupFilter's definition: blue * 63 picks the tiles floor and ceil of
/// it (tile k at column k mod 8, row k / 8), red and green a position inset half a texel in each
/// 64x64 tile, sampled bilinearly; the two samples mix by the fraction of blue * 63, then the
/// result mixes with the original by intensity.
final class LookupFilterTests: FilterTestCase {
    static func reference(_ table: RGBAImage, _ c: RGBA, intensity: Double = 1) -> RGBA {
        let blue = c.z * 63
        let tiles = [blue.rounded(.down), blue.rounded(.up)]
        let samples = tiles.map { k -> RGBA in
            let column = k.truncatingRemainder(dividingBy: 8), row = (k / 8).rounded(.down)
            let u = column / 8 + 0.5 / 512 + (1.0 / 8 - 1.0 / 512) * c.x
            let v = row / 8 + 0.5 / 512 + (1.0 / 8 - 1.0 / 512) * c.y
            return TestImages.sample(table, u, v)
        }
        let t = blue - tiles[0]
        let graded = samples[0] * (1 - t) + samples[1] * t
        let mixed = c * (1 - intensity) + RGBA(graded.rgb, c.w) * intensity
        return mixed
    }

    func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lookup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir.path
    }

    func testIdentityImageLeavesThePictureUnchanged() throws {
        let path = try temporaryDirectory() + "/identity.png"
        try ImageIO.write(LookupImage.identity(), to: path, overwrite: false)
        let out = try render([try filter("lookup", ["image": .string(path)])])
        assertMatches(out, tolerance: 1, "identity lookup") { x, y in TestImages.color(TestImages.pattern, x, y) }
    }

    func testIdentityImageLayout() {
        let image = LookupImage.identity()
        XCTAssertEqual(image.width, 512)
        XCTAssertEqual(image.height, 512)
        // Tile 11 (column 3, row 1), red level 5, green level 62.
        let p = image[3 * 64 + 5, 1 * 64 + 62]
        XCTAssertEqual(p.0, UInt8((5.0 * 255 / 63).rounded()))
        XCTAssertEqual(p.1, UInt8((62.0 * 255 / 63).rounded()))
        XCTAssertEqual(p.2, UInt8((11.0 * 255 / 63).rounded()))
        XCTAssertEqual(image[511, 511].0, 255)
        XCTAssertEqual(image[511, 511].2, 255)
    }

    /// A graded table with cross-channel terms, so every part of the addressing shows.
    static func gradedTable() -> RGBAImage {
        RGBAImage(width: 512, height: 512) { x, y in
            let r = Double(x % 64) / 63, g = Double(y % 64) / 63, b = Double((y / 64) * 8 + x / 64) / 63
            func byte(_ v: Double) -> UInt8 { UInt8((min(max(v, 0), 1) * 255).rounded()) }
            return (byte(r.squareRoot() * 0.8 + 0.2 * b), byte(g * g * 0.9 + 0.1 * r), byte(1 - 0.7 * b + 0.2 * g * r), 255)
        }
    }

    func testGradedImageFollowsGPUImageInterpolation() throws {
        let table = LookupFilterTests.gradedTable()
        let path = try temporaryDirectory() + "/graded.png"
        try ImageIO.write(table, to: path, overwrite: false)
        try assertPointFilter([try filter("lookup", ["image": .string(path)])]) { c, _ in LookupFilterTests.reference(table, c) }
        try assertPointFilter([try filter("lookup", ["image": .string(path), "intensity": .float(0.6)])], "intensity 0.6") { c, _ in
            LookupFilterTests.reference(table, c, intensity: 0.6)
        }
    }

    func testImagesOtherThan512x512AreRejected() throws {
        let path = try temporaryDirectory() + "/small.png"
        try ImageIO.write(RGBAImage(width: 256, height: 256) { _, _ in (0, 0, 0, 255) }, to: path, overwrite: false)
        XCTAssertThrowsError(try FilterInstance(FilterRegistry.named("lookup")!, values: ["image": .string(path)]).prepared()) { error in
            let message = (error as? FilterError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains("256x256") && message.contains("512x512"), message)
        }
        XCTAssertThrowsError(try FilterInstance(FilterRegistry.named("lookup")!).prepared()) { error in
            XCTAssertTrue((error as? FilterError)?.message.contains("no lookup image") == true, "\(error)")
        }
    }

    func testAmatorkaPresetUsesItsEmbeddedImage() throws {
        let preset = try Preset.load("amatorka")
        XCTAssertEqual(preset.filters.first?.declaration.name, "lookup")
        let assetPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("presets/assets/amatorka.png").path
        let table = try ImageIO.read(assetPath)
        XCTAssertEqual(table.width, 512)
        try assertPointFilter(preset.filters) { c, _ in LookupFilterTests.reference(table, c) }
    }
}
