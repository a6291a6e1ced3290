@testable import GPUEncodeKit
@testable import GPUEncodeCore
@testable import GPUEncodeRender
import XCTest

/// Preset parsing and validation: errors must name the file, the position and the JSON path.
final class PresetTests: XCTestCase {
    // Presets load in this process: their pictures and movies decode through the FFmpeg decoder
    // the command line installs at start.
    override class func setUp() {
        super.setUp()
        FilterMedia.install(FFmpegFilterMedia())
    }

    func testBuiltinPresetsLoad() throws {
        XCTAssertTrue(Preset.builtinNames.contains("sepia"))
        XCTAssertTrue(Preset.builtinNames.contains("identity"))
        for name in Preset.builtinNames {
            let preset = try Preset.load(name)
            XCTAssertEqual(preset.name, name, "presets/\(name).json should be named after its file")
            XCTAssertFalse(preset.description.isEmpty, "\(name) needs a description")
            // Only `none` may be empty: an empty chain means "no GPU stage".
            XCTAssertEqual(preset.filters.isEmpty, name == "none", name)
        }
    }

    /// The library reads no environment: the program passes the user's folder (the CLI finds it with
    /// `userDirectory(environment:)` from XDG_CONFIG_HOME or HOME).
    func testUserPresetFolderIsAParameter() {
        func env(_ values: [String: String]) -> (String) -> String? { { values[$0] } }
        XCTAssertEqual(PresetLibrary.userDirectory(environment: env(["XDG_CONFIG_HOME": "/x", "HOME": "/h"])), "/x/gpuencode/presets")
        XCTAssertEqual(PresetLibrary.userDirectory(environment: env(["XDG_CONFIG_HOME": "rel", "HOME": "/h"])), "/h/.config/gpuencode/presets")
        XCTAssertNil(PresetLibrary.userDirectory(environment: env(["HOME": ""])))
        XCTAssertEqual(PresetLibrary(presetDirectories: ["/a"], userDirectory: "/u").directories, ["/a", "/u"])
        XCTAssertEqual(PresetLibrary().directories, [])
    }

    func testDefaultsAreFilledIn() throws {
        let p = try Preset.parse(json: #"{"version": 1, "name": "x", "filters": [{"filter": "sepia"}]}"#, origin: "x.json")
        XCTAssertEqual(p.filters[0].values["intensity"], .float(1))
    }

    func testOutOfRangeNamesPathAndPosition() {
        let json = """
        {"version": 1, "name": "x",
         "filters": [{"filter": "sepia", "intensity": 7}]}
        """
        assertPresetError(json, contains: ["bad.json", "2:47", "filters[0].intensity", "out of range 0...1"])
    }

    func testUnknownFilterSuggestsName() {
        assertPresetError(#"{"version": 1, "name": "x", "filters": [{"filter": "sepiaa"}]}"#,
                          contains: ["filters[0].filter", "unknown filter \"sepiaa\"", "did you mean \"sepia\""])
    }

    func testUnknownParameterAndWrongType() {
        assertPresetError(#"{"version": 1, "name": "x", "filters": [{"filter": "contrast", "contrst": 2}]}"#,
                          contains: ["filters[0].contrst", "did you mean \"contrast\""])
        assertPresetError(#"{"version": 1, "name": "x", "filters": [{"filter": "contrast", "contrast": "high"}]}"#,
                          contains: ["filters[0].contrast", "expected a number, found a string"])
        assertPresetError(#"{"version": 1, "name": "x", "filters": [{"filter": "colorMatrix", "matrix": [[1,0,0]]}]}"#,
                          contains: ["filters[0].matrix", "4 rows of 4"])
    }

    func testSyntaxErrorHasLineAndColumn() {
        assertPresetError("{\"version\": 1,\n  \"name\": \"x\",,\n}", contains: ["2:15", "invalid JSON", "expected a quoted member name"])
    }

    func testMissingAndWrongVersion() {
        assertPresetError(#"{"name": "x", "filters": []}"#, contains: ["missing \"version\""])
        assertPresetError(#"{"version": 9, "name": "x", "filters": []}"#, contains: ["version: unsupported version 9"])
    }

    func testUnknownBuiltinIsPresetError() {
        XCTAssertThrowsError(try Preset.load("sepai")) { error in
            let e = error as? GPUEncodeError
            XCTAssertEqual(e?.exitCode, 67)
            XCTAssertTrue(e?.description.contains("did you mean \"sepia\"") ?? false, "\(error)")
        }
    }

    func testColorMatrixRowsAreOutputChannels() throws {
        let p = try Preset.parse(json: #"{"version": 1, "name": "x", "filters": [{"filter": "colorMatrix", "matrix": [[0,1,0,0],[1,0,0,0],[0,0,1,0],[0,0,0,1]]}]}"#, origin: "m.json")
        XCTAssertEqual(p.filters[0].values["matrix"], .matrix4([0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]))
    }

    private func assertPresetError(_ json: String, contains parts: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try Preset.parse(json: json, origin: "bad.json"), file: file, line: line) { error in
            guard let e = error as? GPUEncodeError else { return XCTFail("not a GPUEncodeError: \(error)", file: file, line: line) }
            XCTAssertEqual(e.exitCode, 67, file: file, line: line)
            for part in parts {
                XCTAssertTrue(e.description.contains(part), "\"\(e.description)\" lacks \"\(part)\"", file: file, line: line)
            }
        }
    }
}

/// The pipeline's queues must hold at most their capacity, whatever the producer does.
final class BoundedQueueTests: XCTestCase {
    func testQueueNeverExceedsCapacity() throws {
        let queue = BoundedQueue<Int>(capacity: 3)
        let consumer = try WorkerThread(name: "consumer") {
            var received: [Int] = []
            while let v = queue.pop() {
                received.append(v)
                usleep(200)
            }
            XCTAssertEqual(received, Array(0..<500))
        }
        for i in 0..<500 { XCTAssertTrue(queue.push(i)) }
        queue.close()
        consumer.join()
        XCTAssertLessThanOrEqual(queue.highWaterMark, 3)
        XCTAssertEqual(queue.highWaterMark, 3, "a fast producer should have filled the queue")
    }

    func testCloseReleasesBlockedProducer() throws {
        let queue = BoundedQueue<Int>(capacity: 1)
        XCTAssertTrue(queue.push(1))
        let producer = try WorkerThread(name: "producer") { XCTAssertFalse(queue.push(2)) }
        usleep(20000)
        queue.close()
        producer.join()
        XCTAssertEqual(queue.pop(), 1)
        XCTAssertNil(queue.pop())
    }

    /// A popped element belongs to the consumer alone: the queue must not keep it alive. With
    /// frames as elements the queue used to hold the last 64 popped ones (about 400 MB at 1080p,
    /// issue 15), until the array was compacted.
    func testPoppedElementsAreReleased() {
        final class Item {}
        let queue = BoundedQueue<Item>(capacity: 3)
        var released: [Bool] = []
        for _ in 0..<10 {
            weak var popped: Item?
            do {
                XCTAssertTrue(queue.push(Item()))
                let got = queue.pop()
                XCTAssertNotNil(got)
                popped = got
            }
            released.append(popped == nil)
        }
        XCTAssertEqual(released, Array(repeating: true, count: 10), "popped elements still alive in the queue")
        // drain hands the rest over and keeps nothing either.
        weak var left: Item?
        do {
            let item = Item()
            left = item
            XCTAssertTrue(queue.push(item))
        }
        var drained = 0
        queue.drain { _ in drained += 1 }
        XCTAssertEqual(drained, 1)
        XCTAssertNil(left, "a drained element is still alive in the queue")
    }
}

/// The Y'CbCr matrices against the published BT.709 / BT.601 figures (not against each other).
final class ColorMathTests: XCTestCase {
    func testBT709LimitedToRGB() {
        let (m, o) = YUVColorSpace(matrix: .bt709, fullRange: false).toRGB()
        // ITU-R BT.709: R = 1.164(Y-16) + 1.793(Cr-128), G = ... - 0.213(Cb-128) - 0.533(Cr-128), B = ... + 2.112(Cb-128)
        XCTAssertEqual(Double(m[0]), 255.0 / 219.0, accuracy: 1e-4)
        XCTAssertEqual(Double(m[2]), 1.5748 * 255 / 224, accuracy: 1e-3)
        XCTAssertEqual(Double(m[4]), -0.1873 * 255 / 224, accuracy: 1e-3)
        XCTAssertEqual(Double(m[5]), -0.4681 * 255 / 224, accuracy: 1e-3)
        XCTAssertEqual(Double(m[7]), 1.8556 * 255 / 224, accuracy: 1e-3)
        // Code (16, 128, 128) is black; (235, 128, 128) is white.
        for (y, expect) in [(16.0, 0.0), (235.0, 1.0)] {
            let v = [y / 255, 128.0 / 255, 128.0 / 255]
            for row in 0..<3 {
                let r = (0..<3).map { Double(m[row * 3 + $0]) * v[$0] }.reduce(0, +) + Double(o[row])
                XCTAssertEqual(r, expect, accuracy: 1e-5)
            }
        }
    }

    func testBT601FullRangeRedFromRGB() {
        // JPEG/JFIF: pure red is Y=76.245, Cb=84.97, Cr=255.5 (clamped to 255 in 8 bits).
        let (m, o) = YUVColorSpace(matrix: .bt601, fullRange: true).fromRGB()
        let yuv = (0..<3).map { Double(m[$0 * 3]) + Double(o[$0]) }
        XCTAssertEqual(yuv[0] * 255, 76.245, accuracy: 0.01)
        XCTAssertEqual(yuv[1] * 255, 84.97, accuracy: 0.05)
        XCTAssertEqual(yuv[2] * 255, 255.5, accuracy: 0.05)
    }
}
