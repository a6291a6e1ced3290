import Foundation
import XCTest

/// Container and stream tags: kept by default, `--strip-metadata`, `--no-location`, `--metadata KEY=VALUE`,
/// judged by ffprobe's format and stream tags.
final class MetadataTests: GPUEncodeTestCase {
    private func tags(_ file: URL) throws -> (format: [String: String], streams: [[String: String]]) {
        let json = try Oracle.ffprobeJSON(["-show_entries", "format_tags:stream_tags", file.path])
        let format = (json["format"] as? [String: Any])?["tags"] as? [String: String] ?? [:]
        let streams = (json["streams"] as? [[String: Any]] ?? []).map { $0["tags"] as? [String: String] ?? [:] }
        return (format, streams)
    }

    @discardableResult
    private func transcode(_ input: URL, _ output: URL, _ extra: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast", "--preset", "none"] + extra)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        return result
    }

    private func locationKeys(_ t: (format: [String: String], streams: [[String: String]])) -> [String] {
        (Array(t.format.keys) + t.streams.flatMap(\.keys)).filter { $0.lowercased().contains("location") }
    }

    /// The iPhone clip's GPS position, make and model survive a plain run into .mov (QuickTime keeps those
    /// keys), and --no-location takes out every location key but nothing else.
    func testLocationKeptByDefaultAndDroppedOnRequest() throws {
        let input = try Paths.media("iphone4s_h264_aac_rot90_2s.mov")
        XCTAssertFalse(locationKeys(try tags(input)).isEmpty, "the clip has no location tag to test with")

        let kept = scratch("kept.mov")
        try transcode(input, kept, [])
        let keptTags = try tags(kept)
        XCTAssertEqual(keptTags.format["location"], "+40.7248-073.9883+044.000/")
        XCTAssertEqual(keptTags.format["model"], "iPhone 4S")

        let dropped = scratch("dropped.mov")
        try transcode(input, dropped, ["--no-location"])
        let droppedTags = try tags(dropped)
        XCTAssertEqual(locationKeys(droppedTags), [], "\(droppedTags)")
        XCTAssertEqual(droppedTags.format["model"], "iPhone 4S", "--no-location must keep the other tags")
        XCTAssertEqual(droppedTags.format["make"], "Apple")

        // Matroska writes every key, including Apple's ISO 6709 one and the -eng copies.
        let mkv = scratch("dropped.mkv")
        try transcode(input, mkv, ["--no-location"])
        let mkvTags = try tags(mkv)
        XCTAssertEqual(locationKeys(mkvTags), [], "\(mkvTags)")
        XCTAssertNotNil(mkvTags.format["COM.APPLE.QUICKTIME.MODEL"] ?? mkvTags.format["com.apple.quicktime.model"], "\(mkvTags.format)")
    }

    func testPhoneMP4LocationDropped() throws {
        let input = try Paths.media("phone_h264_aac_vfr_rot180_2s.mp4")
        let kept = scratch("kept.mp4")
        try transcode(input, kept, [])
        XCTAssertNotNil(try tags(kept).format["location"], "the location is written back when kept")
        let dropped = scratch("dropped.mp4")
        try transcode(input, dropped, ["--no-location"])
        XCTAssertEqual(locationKeys(try tags(dropped)), [])
    }

    func testStripKeepsOnlyLanguage() throws {
        let input = scratch("tagged.mkv")
        try Oracle.makeClip(input, videoArguments: Oracle.defaultVideoArguments + [
            "-metadata", "title=Secret title", "-metadata", "comment=hello", "-metadata", "location=+40.7-073.9/",
            "-metadata:s:a:0", "language=fra", "-metadata:s:a:0", "title=Commentary", "-metadata:s:v:0", "language=eng",
        ])
        for ext in ["mkv", "mp4"] {
            let output = scratch("stripped.\(ext)")
            try transcode(input, output, ["--strip-metadata"])
            let t = try tags(output)
            for key in ["title", "comment", "location", "TITLE", "COMMENT", "LOCATION"] {
                XCTAssertNil(t.format[key], "\(ext): \(key) survived: \(t.format)")
            }
            XCTAssertEqual(t.streams.count, 2)
            XCTAssertEqual(t.streams.first?["language"], "eng", "\(ext): \(t.streams)")
            XCTAssertEqual(t.streams.last?["language"], "fra", "\(ext): \(t.streams)")
            XCTAssertNil(t.streams.last?["title"], "\(ext): the stream title survived: \(t.streams)")
            XCTAssertNil(t.streams.last?["TITLE"], "\(ext): the stream title survived: \(t.streams)")
        }
        // Without --strip-metadata they are all there.
        let kept = scratch("kept.mkv")
        try transcode(input, kept, [])
        let t = try tags(kept)
        XCTAssertEqual(t.format["title"] ?? t.format["TITLE"], "Secret title")
        XCTAssertEqual(t.streams.last?["title"] ?? t.streams.last?["TITLE"], "Commentary")
    }

    func testSetAndDeleteTags() throws {
        let input = scratch("tagged.mp4")
        try Oracle.makeClip(input, videoArguments: Oracle.defaultVideoArguments + ["-metadata", "title=Old", "-metadata", "comment=remove me"])
        let output = scratch("set.mp4")
        try transcode(input, output, ["--metadata", "title=Holiday = fun", "--metadata", "comment=", "--metadata", "artist=Me"])
        let t = try tags(output).format
        XCTAssertEqual(t["title"], "Holiday = fun", "the value runs to the end, = included: \(t)")
        XCTAssertEqual(t["artist"], "Me")
        XCTAssertNil(t["comment"], "an empty value deletes: \(t)")

        // After --strip-metadata only what is set is there.
        let fresh = scratch("fresh.mp4")
        try transcode(input, fresh, ["--strip-metadata", "--metadata", "album=New"])
        let f = try tags(fresh).format
        XCTAssertEqual(f["album"], "New")
        XCTAssertNil(f["title"], "\(f)")

        // A key .mp4 has no place for is reported; .mkv writes it.
        let unknown = scratch("unknown.mp4")
        let result = try transcode(input, unknown, ["--metadata", "camera_rig=A"])
        XCTAssertTrue(result.stderr.contains("--metadata camera_rig"), result.stderr)
        let mkv = scratch("unknown.mkv")
        let quiet = try transcode(input, mkv, ["--metadata", "camera_rig=A"])
        XCTAssertFalse(quiet.stderr.contains("camera_rig"), quiet.stderr)
        let m = try tags(mkv).format
        XCTAssertEqual(m["camera_rig"] ?? m["CAMERA_RIG"], "A", "\(m)")
    }

    func testMalformedMetadataIsAUsageError() throws {
        let input = try Paths.media("h264_vorbis.mkv")
        for bad in ["novalue", "=value"] {
            let before = listing(workDirectory)
            let result = try gpuencode([input.path, scratch("out.mkv").path, "--metadata", bad])
            assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["--metadata"], outputDirectory: workDirectory, before: before)
        }
    }
}
