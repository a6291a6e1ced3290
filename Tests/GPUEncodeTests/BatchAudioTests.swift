import Foundation
import GPUEncodeKit
import XCTest

// The audio and metadata settings as batch runs them (not only as it plans them): the batch's own
// flags, then a manifest row that overrides them for one job, judged on the written files by ffprobe.

final class BatchAudioTests: BatchTestCase {
    func streams(_ file: URL) throws -> [String] {
        let json = try Oracle.ffprobeJSON(["-show_entries", "stream=codec_name", file.path])
        return (json["streams"] as? [[String: Any]] ?? []).compactMap { $0["codec_name"] as? String }
    }

    func tags(_ file: URL) throws -> [String: String] {
        let json = try Oracle.ffprobeJSON(["-show_entries", "format_tags", file.path])
        return ((json["format"] as? [String: Any])?["tags"] as? [String: String]) ?? [:]
    }

    func testBatchFlagsAndManifestRowsReachTheAudioAndTheTags() throws {
        let dir = scratch("in")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        // Vorbis in Matroska, with a GPS tag: .mp4 players do not play Vorbis.
        for name in ["a", "b"] {
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "0.4",
                                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "libvorbis",
                                             "-metadata", "location=+40.7+074.0/", "-metadata", "title=original",
                                             dir.appendingPathComponent("\(name).mkv").path])
        }
        // Flags only: auto re-encodes Vorbis to AAC for .mp4; --no-location and --metadata apply.
        let out = scratch("out")
        let r = try batch([dir.path, "--out-dir", out.path, "--name", "{stem}.mp4", "--preset", "sepia", "--speed", "ultrafast",
                           "--no-location", "--metadata", "artist=batch"])
        XCTAssertEqual(r.status, 0, r.summary)
        for name in ["a", "b"] {
            let file = out.appendingPathComponent("\(name).mp4")
            XCTAssertEqual(try streams(file), ["h264", "aac"], name)
            let t = try tags(file)
            XCTAssertNil(t["location"], "\(t)")
            XCTAssertEqual(t["title"], "original")
            XCTAssertEqual(t["artist"], "batch")
        }

        // A manifest: job a takes the flags (--audio opus into .mkv), job b's row says no audio and
        // strips the tags, and sets its own title.
        let manifest = scratch("jobs.json")
        try """
        {"jobs": [{"input": "\(dir.path)/a.mkv", "output": "\(out.path)/m-a.mkv"},
                  {"input": "\(dir.path)/b.mkv", "output": "\(out.path)/m-b.mp4", "audio": "none", "stripMetadata": true,
                   "metadata": {"title": "row"}}]}
        """.write(to: manifest, atomically: true, encoding: .utf8)
        let m = try batch(["--manifest", manifest.path, "--preset", "sepia", "--speed", "ultrafast", "--audio", "opus"])
        XCTAssertEqual(m.status, 0, m.summary)
        XCTAssertEqual(try streams(out.appendingPathComponent("m-a.mkv")), ["h264", "opus"])
        XCTAssertEqual(try streams(out.appendingPathComponent("m-b.mp4")), ["h264"])
        let t = try tags(out.appendingPathComponent("m-b.mp4"))
        XCTAssertEqual(t["title"], "row")
        XCTAssertNil(t["location"])
        XCTAssertNil(t["artist"])
    }
}
