import Foundation
import XCTest

/// `--dry-run` and `--json` (docs/json.md), checked against ffprobe of the input and output, and
/// the defaults that tripped people: preview and contact-sheet at 10% of the clip, ffmpeg's
/// `-preset fast`.
final class MachineOutputTests: GPUEncodeTestCase {
    /// A 2 s clip with video (testsrc2, 25 fps), AAC audio and, in Matroska, a SubRip subtitle:
    /// .mp4 outputs drop the subtitle, .mkv outputs copy it.
    private func clip() throws -> URL {
        let srt = scratch("subs.srt")
        try Data("1\n00:00:00,200 --> 00:00:01,500\nhello\n".utf8).write(to: srt)
        let av = scratch("av.mp4")
        try Oracle.makeClip(av, seconds: 2, size: "160x120", rate: 25)
        let file = scratch("in.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", av.path, "-i", srt.path, "-map", "0", "-map", "1",
                                         "-c", "copy", "-c:s", "srt", "-metadata:s:s:0", "language=eng", file.path])
        return file
    }

    /// stdout parsed as one JSON object (the whole of it: nothing else may be there).
    private func document(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try XCTUnwrap(object as? [String: Any], "stdout is not one JSON object: \(result.stdout.prefix(500))", file: file, line: line)
    }

    private func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    private func probe(_ file: URL) throws -> (format: [String: Any], streams: [[String: Any]]) {
        let json = try Oracle.ffprobeJSON(["-show_format", "-show_streams", file.path])
        return (json["format"] as? [String: Any] ?? [:], json["streams"] as? [[String: Any]] ?? [])
    }

    /// Frames the first video stream decodes to, counted by ffprobe.
    private func decodedFrames(_ file: URL) throws -> Int {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-count_frames", "-show_entries", "stream=nb_read_frames", file.path])
        let s = (json["streams"] as? [[String: Any]])?.first
        return Int(s?["nb_read_frames"] as? String ?? "") ?? -1
    }

    /// The input member against ffprobe: container, duration, and per stream index, type, codec,
    /// picture size and sample rate.
    private func assertInputMatchesFFprobe(_ doc: [String: Any], _ input: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let (format, streams) = try probe(input)
        let described = try XCTUnwrap(doc["input"] as? [String: Any], file: file, line: line)
        XCTAssertEqual(described["path"] as? String, input.path, file: file, line: line)
        XCTAssertEqual(described["container"] as? String, format["format_name"] as? String, file: file, line: line)
        let duration = try XCTUnwrap(number(described["duration"]), file: file, line: line)
        let probed = try XCTUnwrap(Double(format["duration"] as? String ?? ""), file: file, line: line)
        XCTAssertEqual(duration, probed, accuracy: 0.001, "input duration \(duration) s, ffprobe \(probed) s", file: file, line: line)
        let list = try XCTUnwrap(described["streams"] as? [[String: Any]], file: file, line: line)
        XCTAssertEqual(list.count, streams.count, "input streams: \(list.count), ffprobe \(streams.count)", file: file, line: line)
        for (ours, theirs) in zip(list, streams) {
            XCTAssertEqual(number(ours["index"]).map(Int.init), theirs["index"] as? Int, file: file, line: line)
            XCTAssertEqual(ours["type"] as? String, theirs["codec_type"] as? String, file: file, line: line)
            XCTAssertEqual(ours["codec"] as? String, theirs["codec_name"] as? String, file: file, line: line)
            if theirs["codec_type"] as? String == "video" {
                XCTAssertEqual(number(ours["width"]).map(Int.init), theirs["width"] as? Int, file: file, line: line)
                XCTAssertEqual(number(ours["height"]).map(Int.init), theirs["height"] as? Int, file: file, line: line)
                XCTAssertEqual(ours["pixelFormat"] as? String, theirs["pix_fmt"] as? String, file: file, line: line)
            }
            if theirs["codec_type"] as? String == "audio" {
                XCTAssertEqual(number(ours["sampleRate"]).map { String(Int($0)) }, theirs["sample_rate"] as? String, file: file, line: line)
                XCTAssertEqual(number(ours["channels"]).map(Int.init), theirs["channels"] as? Int, file: file, line: line)
            }
        }
    }

    /// The output streams the document promises, in order, as (input index, action, codec).
    private func outputStreams(_ doc: [String: Any]) throws -> [[String: Any]] {
        let output = try XCTUnwrap(doc["output"] as? [String: Any])
        return try XCTUnwrap(output["streams"] as? [[String: Any]])
    }

    // MARK: --dry-run

    /// A dry run into .mp4 and .mkv: exit 0, the folder exactly as before (no output, no
    /// temporary), and a document whose input matches ffprobe and whose plan maps each stream:
    /// video encoded on the GPU with libx264, AAC copied, the subtitle copied into .mkv and
    /// dropped from .mp4 with the reason. The GPU member names the renderer that compiled the chain.
    func testDryRunPlansAndWritesNothing() throws {
        let input = try clip()
        let out = scratch("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        for ext in ["mp4", "mkv"] {
            let target = out.appendingPathComponent("planned.\(ext)")
            let before = listing(out)
            let result = try gpuencode([input.path, target.path, "--preset", "sepia", "--dry-run", "--json"])
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            XCTAssertEqual(listing(out), before, "a dry run wrote into \(out.path)")
            XCTAssertEqual(listing(workDirectory).filter { $0.hasPrefix(".gpuencode-") }, [], "a dry run left a temporary")
            let doc = try document(result)
            XCTAssertEqual(number(doc["version"]), 1)
            XCTAssertEqual(doc["dryRun"] as? Bool, true)
            XCTAssertEqual(doc["status"] as? String, "planned")
            XCTAssertEqual(number(doc["exitCode"]), 0)
            XCTAssertTrue(doc["result"] is NSNull, "a dry run has no result")
            try assertInputMatchesFFprobe(doc, input)
            let output = try XCTUnwrap(doc["output"] as? [String: Any])
            XCTAssertEqual(output["container"] as? String, ext == "mp4" ? "mp4" : "matroska")
            let streams = try outputStreams(doc)
            XCTAssertEqual(streams.count, 3, "\(streams)")
            let video = streams[0], audio = streams[1], subtitle = streams[2]
            XCTAssertEqual(video["action"] as? String, "encode")
            XCTAssertEqual(video["codec"] as? String, "h264")
            XCTAssertEqual(video["encoder"] as? String, "libx264")
            XCTAssertEqual(video["gpu"] as? Bool, true)
            XCTAssertEqual(number(video["width"]), 160)
            XCTAssertEqual(audio["action"] as? String, "copy")
            XCTAssertEqual(audio["codec"] as? String, "aac")
            XCTAssertEqual(subtitle["codec"] as? String, "subrip")
            if ext == "mp4" {
                XCTAssertEqual(subtitle["action"] as? String, "drop")
                XCTAssertTrue(subtitle["index"] is NSNull)
                XCTAssertTrue((subtitle["reason"] as? String ?? "").contains(".mp4 cannot hold"), "\(subtitle)")
                XCTAssertTrue((doc["warnings"] as? [String] ?? []).contains { $0.contains("subtitle stream #2") }, "\(doc["warnings"] ?? "")")
            } else {
                XCTAssertEqual(subtitle["action"] as? String, "copy")
                XCTAssertEqual(number(subtitle["index"]), 2)
            }
            let gpu = try XCTUnwrap(doc["gpu"] as? [String: Any], "no gpu member: \(doc["gpu"] ?? "nil")")
            XCTAssertFalse((gpu["renderer"] as? String ?? "").isEmpty)
            XCTAssertEqual(gpu["renderPath"] as? String, "direct")
            XCTAssertFalse((gpu["passes"] as? [String] ?? []).isEmpty, "no compiled passes: \(gpu)")
            let filters = try XCTUnwrap(doc["filters"] as? [[String: Any]])
            XCTAssertEqual(filters.first?["filter"] as? String, "sepia")
            // The plan in words went to stderr; the document is all of stdout (parsed above).
            XCTAssertTrue(result.stderr.contains("dry run: nothing written"), result.stderr)
        }
        // Without --json the plan is stdout's, still nothing written.
        let before = listing(out)
        let plain = try gpuencode([input.path, out.appendingPathComponent("p.mp4").path, "--dry-run"])
        XCTAssertEqual(plain.status, ExitCode.ok, plain.summary)
        XCTAssertTrue(plain.stdout.contains("encode h264 (libx264)") && plain.stdout.contains("dry run: nothing written"), plain.stdout)
        XCTAssertEqual(listing(out), before)
    }

    /// A rotated phone clip: the input's rotation is ffprobe's (display matrix -180 → 180 clockwise);
    /// through the GPU the output is upright (rotation 0) and, after the run, ffprobe finds no display
    /// matrix; with --preset none there is no GPU stage (gpu null) and the rotation stays a flag, which
    /// ffprobe finds on the output. The frame counts of a variable-rate clip match ffprobe's.
    func testRotationAndTheGPUStageAgainstFFprobe() throws {
        let input = try Paths.media("phone_h264_aac_vfr_rot180_2s.mp4")
        let inputRotation = try XCTUnwrap(try Oracle.streams(input).first { $0.codecType == "video" }?.rotation)
        for preset in ["sepia", "none"] {
            let target = scratch("\(preset).mp4")
            let result = try gpuencode([input.path, target.path, "--preset", preset, "--json"])
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            let doc = try document(result)
            let described = try XCTUnwrap((doc["input"] as? [String: Any])?["streams"] as? [[String: Any]])
            let inVideo = try XCTUnwrap(described.first { $0["type"] as? String == "video" })
            // ffprobe's rotation is counter-clockwise degrees (negative: clockwise); ours clockwise 0-359.
            let expected = (360 - Int(inputRotation.rounded()) % 360) % 360
            XCTAssertEqual(number(inVideo["rotation"]).map(Int.init), expected, "input rotation against ffprobe's \(inputRotation)")
            let video = try XCTUnwrap(try outputStreams(doc).first { $0["type"] as? String == "video" })
            let outRotation = try Oracle.streams(target).first { $0.codecType == "video" }?.rotation
            if preset == "none" {
                XCTAssertTrue(doc["gpu"] is NSNull, "no GPU stage: \(doc["gpu"] ?? "nil")")
                XCTAssertEqual(video["gpu"] as? Bool, false)
                XCTAssertEqual(number(video["rotation"]).map(Int.init), expected)
                XCTAssertEqual(outRotation.map { Int($0.rounded()) }, Int(inputRotation.rounded()), "the flag is kept")
            } else {
                XCTAssertEqual(video["gpu"] as? Bool, true)
                XCTAssertEqual(number(video["rotation"]), 0)
                XCTAssertTrue(outRotation == nil || outRotation == 0, "turned upright, no display matrix: \(outRotation ?? 0)")
            }
            let r = try XCTUnwrap(doc["result"] as? [String: Any])
            XCTAssertEqual(number(r["framesOut"]).map(Int.init), try decodedFrames(target), preset)
            XCTAssertEqual(number(r["framesIn"]).map(Int.init), try decodedFrames(input), preset)
        }
    }

    /// "settings" comes from EncodeSetting.all (the same table as `presets show` and the schema):
    /// every key of the schema's encode settings is there, given values as given, defaults filled.
    func testSettingsMemberCoversEveryEncodeSetting() throws {
        let input = try clip()
        let result = try gpuencode([input.path, scratch("o.mkv").path, "--dry-run", "--json", "--crf", "20", "--speed", "fast", "-an",
                                    "--metadata", "title=Holiday"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        let settings = try XCTUnwrap(try document(result)["settings"] as? [String: Any])
        let schema = try gpuencode(["presets", "schema"])
        let schemaJSON = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(schema.stdout.utf8)) as? [String: Any])
        let text = String(data: try JSONSerialization.data(withJSONObject: schemaJSON), encoding: .utf8) ?? ""
        XCTAssertEqual(number(settings["crf"]), 20)
        XCTAssertEqual(settings["speed"] as? String, "fast")
        XCTAssertEqual(settings["audio"] as? String, "none")
        XCTAssertEqual(settings["codec"] as? String, "h264")
        XCTAssertEqual((settings["metadata"] as? [String: String])?["title"], "Holiday")
        XCTAssertEqual(settings["hwaccel"] as? String, "none")
        // Every preset "encode" key the schema lists is a member (the schema is made from the same table).
        let encodeKeys = ["codec", "speed", "crf", "bitrate", "keyint", "tune", "profile", "hdr", "tonemap", "audio", "deinterlace", "copyts"]
        for key in encodeKeys {
            XCTAssertTrue(text.contains("\"\(key)\""), "schema lacks \(key)")
            XCTAssertNotNil(settings[key], "settings lacks \(key): \(settings.keys.sorted())")
        }
        // With -an the audio stream is dropped, and said so.
        let streams = try outputStreams(try document(result))
        XCTAssertEqual(streams.first { $0["type"] as? String == "audio" }?["reason"] as? String, "--audio none")
    }

    /// A dry run exits with the code the run would have, writes nothing, and still prints a
    /// document (status failed, the error line, the same exit code): a missing input (66), an
    /// unknown preset (67), a preset this GPU cannot compile (67: found only by making the chain
    /// on the GPU), an existing output without -y (73). The same failures as real runs, for comparison.
    func testDryRunExitCodes() throws {
        let input = try clip()
        let out = scratch("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let existing = out.appendingPathComponent("exists.mp4")
        try Data("keep".utf8).write(to: existing)
        let source = "uniform vec4 big[70000];\\nvoid main() { gl_FragColor = texture2D(inputImageTexture, textureCoordinate) + 0.0 * big[int(textureCoordinate.x * 3.0)]; }"
        let tooBig = scratch("big.json")
        try Data(#"{"version": 1, "name": "big", "filters": [{"filter": "shader", "source": "\#(source)"}]}"#.utf8).write(to: tooBig)
        let cases: [(String, [String], Int32, String)] = [
            ("missing input", [scratch("nosuch.mp4").path, out.appendingPathComponent("a.mkv").path], ExitCode.noInput, "nosuch.mp4"),
            ("unknown preset", [input.path, out.appendingPathComponent("b.mkv").path, "--preset", "nosuchlook"], ExitCode.badPreset, "nosuchlook"),
            ("preset this GPU cannot run", [input.path, out.appendingPathComponent("c.mkv").path, "--preset", tooBig.path], ExitCode.badPreset, "no split of the chain can help"),
            ("existing output", [input.path, existing.path], ExitCode.cannotCreate, "already exists"),
        ]
        for (name, arguments, code, culprit) in cases {
            let before = listing(out)
            let dry = try gpuencode(arguments + ["--dry-run", "--json"])
            assertCleanFailure(dry, exitCodes: [code], mentioning: [culprit], outputDirectory: out, before: before)
            let doc = try document(dry)
            XCTAssertEqual(doc["status"] as? String, "failed", name)
            XCTAssertEqual(number(doc["exitCode"]).map { Int32($0) }, code, name)
            XCTAssertTrue((doc["error"] as? String ?? "").contains(culprit), "\(name): \(doc["error"] ?? "")")
            // What was known when it failed is there: the settings once the preset loaded.
            XCTAssertEqual(doc["settings"] is NSNull, name == "unknown preset", "\(name): settings \(doc["settings"] ?? "nil")")
            let plain = try gpuencode(arguments + ["--dry-run"])
            assertCleanFailure(plain, exitCodes: [code], mentioning: [culprit], outputDirectory: out, before: before)
            XCTAssertEqual(plain.stdout, "", "\(name): a failed dry run without --json prints nothing on stdout")
            let real = try gpuencode(arguments)
            XCTAssertEqual(real.status, code, "\(name): the real run exits \(real.status), the dry run \(code)")
        }
        XCTAssertEqual(try String(contentsOf: existing), "keep")
    }

    // MARK: --json after a run

    /// After a real run the document describes what was done, checked against ffprobe of the
    /// output: as many streams as the plan wrote, their codecs, the video's decoded frame count
    /// (framesOut), the input's (framesIn), the size on disk and the duration. Both containers,
    /// and both transfer paths (the gpu member says which ran).
    func testJSONAfterRunMatchesFFprobe() throws {
        let input = try clip()
        let inputFrames = try decodedFrames(input)
        for (ext, transfer) in [("mp4", "pbo"), ("mkv", "client")] {
            let target = scratch("done.\(ext)")
            // (The transfer is the renderer's: sepia's pass drawn by it, not by the CPU kernels.)
            let result = try gpuencode([input.path, target.path, "--preset", "sepia", "--json"],
                                       environment: ["GPUENCODE_TRANSFER": transfer, "GPUENCODE_CPU_KERNELS": "0"])
            XCTAssertEqual(result.status, ExitCode.ok, result.summary)
            let doc = try document(result)
            XCTAssertEqual(doc["status"] as? String, "done")
            XCTAssertEqual(doc["dryRun"] as? Bool, false)
            try assertInputMatchesFFprobe(doc, input)
            let written = try outputStreams(doc).filter { $0["action"] as? String != "drop" }
            let (format, streams) = try probe(target)
            XCTAssertEqual(written.count, streams.count, "\(ext): document lists \(written.count) output streams, ffprobe finds \(streams.count)")
            for (ours, theirs) in zip(written, streams) {
                XCTAssertEqual(number(ours["index"]).map(Int.init), theirs["index"] as? Int, ext)
                XCTAssertEqual(ours["type"] as? String, theirs["codec_type"] as? String, ext)
                XCTAssertEqual(ours["codec"] as? String, theirs["codec_name"] as? String, ext)
            }
            let gpu = try XCTUnwrap(doc["gpu"] as? [String: Any])
            XCTAssertEqual(gpu["transfer"] as? String, transfer)
            let r = try XCTUnwrap(doc["result"] as? [String: Any], "no result member")
            let outputFrames = try decodedFrames(target)
            print("\(ext) (\(transfer)): framesIn \(r["framesIn"] ?? "?") (ffprobe \(inputFrames)), framesOut \(r["framesOut"] ?? "?") (ffprobe \(outputFrames)), size \(r["outputSize"] ?? "?"), duration \(r["outputDuration"] ?? "?") (ffprobe format \(format["duration"] ?? "?")), \(r["seconds"] ?? "?") s")
            XCTAssertEqual(number(r["framesOut"]).map(Int.init), outputFrames, "\(ext): framesOut against ffprobe's count of the output")
            XCTAssertEqual(number(r["framesIn"]).map(Int.init), inputFrames, "\(ext): framesIn against ffprobe's count of the input")
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: target.path)[.size] as? NSNumber)
            XCTAssertEqual(number(r["outputSize"]), size.doubleValue, ext)
            // The video stream's duration (Matroska stores none per stream: the container's), as ffprobe reads it.
            let videoDuration = streams.first { $0["codec_type"] as? String == "video" }?["duration"] as? String
            let probedDuration = try XCTUnwrap(Double(videoDuration ?? format["duration"] as? String ?? ""))
            let duration = try XCTUnwrap(number(r["outputDuration"]))
            XCTAssertEqual(duration, probedDuration, accuracy: 0.0005, "\(ext): outputDuration \(duration) s, ffprobe \(probedDuration) s")
            XCTAssertGreaterThan(number(r["seconds"]) ?? 0, 0)
            let bitrate = try XCTUnwrap(number(r["outputBitrate"]))
            XCTAssertEqual(bitrate, size.doubleValue * 8 / duration, accuracy: 1, ext)
        }
        // One frame per field: framesOut is what the encoder got (twice the decoder's), as ffprobe counts it.
        let fields = scratch("fields.mkv")
        let doubled = try gpuencode([input.path, fields.path, "--deinterlace", "field", "--json"])
        XCTAssertEqual(doubled.status, ExitCode.ok, doubled.summary)
        let r = try XCTUnwrap(try document(doubled)["result"] as? [String: Any])
        XCTAssertEqual(number(r["framesIn"]).map(Int.init), inputFrames)
        XCTAssertEqual(number(r["framesOut"]).map(Int.init), try decodedFrames(fields))
        XCTAssertEqual(number(r["framesOut"]).map(Int.init), 2 * inputFrames)
    }

    /// A failed run with --json still prints a document (66 for an input that is not media), and a
    /// usage error found while parsing does too (64). --json shares stdout with nothing: --stats is refused.
    func testJSONOnFailureAndStdoutToItself() throws {
        let notMedia = scratch("notes.mp4")
        try Data("not a movie".utf8).write(to: notMedia)
        let failed = try gpuencode([notMedia.path, scratch("o.mp4").path, "--json"])
        XCTAssertEqual(failed.status, ExitCode.noInput, failed.summary)
        let doc = try document(failed)
        XCTAssertEqual(doc["status"] as? String, "failed")
        XCTAssertEqual(number(doc["exitCode"]), 66)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch("o.mp4").path))

        let usage = try gpuencode([notMedia.path, scratch("o.mp4").path, "--json", "--crf", "99"])
        XCTAssertEqual(usage.status, ExitCode.usage, usage.summary)
        XCTAssertEqual(number(try document(usage)["exitCode"]), 64)

        let clash = try gpuencode([notMedia.path, scratch("o.mp4").path, "--json", "--stats"])
        XCTAssertEqual(clash.status, ExitCode.usage, clash.summary)
        XCTAssertTrue(clash.stderr.contains("--json") && clash.stderr.contains("--stats"), clash.stderr)
    }

    // MARK: ffmpeg's -preset

    /// `-preset fast` (ffmpeg's encoder speed) is told what --preset and --speed are: one line, 64,
    /// on the transcode and on batch; `--preset fast` with no preset of that name: one line, 67
    /// (the preset error it is). A user preset named fast.json still wins.
    func testFFmpegPresetSpeedNamesPointAtSpeed() throws {
        let input = try clip()
        let single = try gpuencode([input.path, scratch("o.mp4").path, "-preset", "fast"])
        assertCleanFailure(single, exitCodes: [ExitCode.usage], mentioning: ["-preset fast", "--speed fast", "--preset"],
                           outputDirectory: workDirectory, before: listing(workDirectory))
        let batch = try gpuencode(["batch", input.path, "--out-dir", scratch("b").path, "-preset", "veryslow"])
        assertCleanFailure(batch, exitCodes: [ExitCode.usage], mentioning: ["--speed veryslow"])
        let other = try gpuencode([input.path, scratch("o.mp4").path, "-preset", "sepia"])
        assertCleanFailure(other, exitCodes: [ExitCode.usage], mentioning: ["--preset (two dashes)"])

        let long = try gpuencode([input.path, scratch("o.mp4").path, "--preset", "fast"])
        assertCleanFailure(long, exitCodes: [ExitCode.badPreset], mentioning: ["--preset is the look", "--speed fast"])

        let dir = scratch("looks")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(#"{"version": 2, "name": "fast", "filters": [{"filter": "sepia"}]}"#.utf8).write(to: dir.appendingPathComponent("fast.json"))
        let mine = try gpuencode([input.path, scratch("o.mp4").path, "--preset", "fast", "--preset-dir", dir.path, "--dry-run", "--json"])
        XCTAssertEqual(mine.status, ExitCode.ok, mine.summary)
        XCTAssertEqual((try document(mine)["preset"] as? [String: Any])?["name"] as? String, "fast")
    }

    // MARK: the representative frame

    /// A 5 s clip at 10 fps whose frame N has luma 16 + 4N (so each frame tells its index).
    private func numberedClip() throws -> URL {
        let file = scratch("numbered.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=10:d=5,format=yuv420p",
                                         "-vf", "geq=lum='16+4*N':cb=128:cr=128", "-c:v", "ffv1", file.path])
        return file
    }

    /// The index of the frame a picture shows: its centre's grey level back to 16 + 4N (full-range RGB).
    private func frameIndex(_ png: URL) throws -> Double {
        let raw = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        // The picture's centre row and column (the contact sheet's tile is the picture itself).
        let size = try Oracle.ffprobeJSON(["-show_streams", png.path])
        let s = try XCTUnwrap((size["streams"] as? [[String: Any]])?.first)
        let width = try XCTUnwrap(s["width"] as? Int), height = try XCTUnwrap(s["height"] as? Int)
        let grey = Double(raw[(height / 2) * width + width / 2])
        return (grey * 219 / 255) / 4
    }

    /// Which frame the representative time picks, from ffprobe: the first whose timestamp is at or
    /// after 10% of ffprobe's duration (half a frame of slack, as --at).
    private func expectedIndex(_ clip: URL) throws -> Int {
        let (format, _) = try probe(clip)
        let duration = try XCTUnwrap(Double(format["duration"] as? String ?? ""))
        let times = try Oracle.frameTimes(clip)
        return try XCTUnwrap(times.firstIndex { $0 + 0.05 >= duration * 0.1 })
    }

    /// preview and contact-sheet without --at show the frame 10% into the clip (frame 5 of 50),
    /// not the first; --at still picks its own.
    func testPreviewAndContactSheetDefaultToTenPercent() throws {
        let input = try numberedClip()
        let expected = try expectedIndex(input)
        XCTAssertEqual(expected, 5, "ffprobe's 10% frame of the 5 s clip")
        let png = scratch("p.png")
        let preview = try gpuencode(["preview", input.path, "-o", png.path, "-v"])
        XCTAssertEqual(preview.status, ExitCode.ok, preview.summary)
        let shown = try frameIndex(png)
        print("preview default: frame \(shown) (expected \(expected))")
        XCTAssertEqual(shown, Double(expected), accuracy: 0.3, "preview's default frame")

        let sheet = scratch("s.png")
        let cs = try gpuencode(["contact-sheet", input.path, "--presets", "identity", "--tile-width", "64", "--gap", "0", "-o", sheet.path])
        XCTAssertEqual(cs.status, ExitCode.ok, cs.summary)
        let tile = try frameIndex(sheet)
        print("contact-sheet default: frame \(tile) (expected \(expected))")
        XCTAssertEqual(tile, Double(expected), accuracy: 0.3, "contact-sheet's default frame")

        let atZero = scratch("zero.png")
        XCTAssertEqual(try gpuencode(["preview", input.path, "--at", "0", "-o", atZero.path]).status, ExitCode.ok)
        XCTAssertEqual(try frameIndex(atZero), 0, accuracy: 0.3, "--at 0")
        let atTwo = scratch("two.png")
        XCTAssertEqual(try gpuencode(["contact-sheet", input.path, "--presets", "identity", "--tile-width", "64", "--gap", "0", "--at", "2", "-o", atTwo.path]).status, ExitCode.ok)
        XCTAssertEqual(try frameIndex(atTwo), 20, accuracy: 0.3, "--at 2")
    }
}
