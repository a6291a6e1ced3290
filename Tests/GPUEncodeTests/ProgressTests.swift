import Foundation
import GPUEncodeBatch
import GPUEncodeKit
import XCTest

// Issue 14, progress that scripts can read: the stderr styles (kv, json, terminal), ffmpeg's
// -progress stream checked against ffmpeg 5.1 itself, the progress file's safety, the final line,
// -q, and frames counted out of the encoder. The oracles are ffmpeg (its own -progress output for
// the key set and formats) and ffprobe (frame counts, packet sizes, file sizes).

/// Blocks of `key=value` lines, each ending with its `progress=` line.
func progressBlocks(_ text: String) -> [[(key: String, value: String)]] {
    var blocks: [[(key: String, value: String)]] = []
    var current: [(key: String, value: String)] = []
    for line in text.split(separator: "\n") {
        guard let eq = line.firstIndex(of: "=") else { continue }
        current.append((String(line[..<eq]), String(line[line.index(after: eq)...])))
        if line.hasPrefix("progress=") { blocks.append(current); current = [] }
    }
    return blocks
}

func value(_ block: [(key: String, value: String)], _ key: String) -> String? {
    block.first { $0.key == key }?.value
}

final class ProgressTests: GPUEncodeTestCase {
    static let fast = ["--x264-preset", "ultrafast"]

    /// ffmpeg 5.1's formats for each key (fftools/ffmpeg.c print_report); checked on ffmpeg's own
    /// output below before they judge ours.
    static let formats: [String: String] = [
        "frame": #"^\d+$"#, "fps": #"^\d+\.\d\d$"#, "stream_0_0_q": #"^-?\d+\.\d$"#,
        "bitrate": #"^( *\d+\.\dkbits/s|N/A)$"#, "total_size": #"^(\d+|N/A)$"#,
        "out_time_us": #"^(-?\d+|N/A)$"#, "out_time_ms": #"^(-?\d+|N/A)$"#, "out_time": #"^(-?\d\d:\d\d:\d\d\.\d{6}|N/A)$"#,
        "dup_frames": #"^\d+$"#, "drop_frames": #"^\d+$"#, "speed": #"^( *[0-9.e+]+x|N/A)$"#, "progress": #"^(continue|end)$"#,
    ]

    func clip(_ name: String, seconds: Double = 2, audio: Bool = true, size: String = "320x240") throws -> URL {
        let url = scratch(name)
        try Oracle.makeClip(url, seconds: seconds, size: size, audio: audio)
        return url
    }

    func fileSize(_ url: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? -1
    }

    func assertFormats(_ blocks: [[(key: String, value: String)]], _ who: String, file: StaticString = #filePath, line: UInt = #line) {
        for block in blocks {
            for (k, v) in block {
                guard let pattern = Self.formats[k] else { XCTFail("\(who): key \(k) is not one of ffmpeg's", file: file, line: line); continue }
                XCTAssertNotNil(v.range(of: pattern, options: .regularExpression), "\(who): \(k)=\(v) is not in ffmpeg's format \(pattern)", file: file, line: line)
            }
        }
    }

    /// `-progress pipe:1`: every block has ffmpeg 5.1's keys in ffmpeg's order and formats (taken
    /// from ffmpeg itself on the same clip), the stream ends with one `progress=end` whose frame is
    /// ffprobe's count and total_size the file's size; stdout carries nothing else.
    func testProgressPipe1HasFFmpegKeysAndEndsWithTheFrameCount() throws {
        let input = try clip("in.mp4", seconds: 3)
        let reference = scratch("ffmpeg.mp4")
        let ff = try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-c:v", "libx264", "-preset", "ultrafast",
                                                  "-c:a", "copy", "-progress", "pipe:1", "-stats_period", "0.1", reference.path])
        let ffBlocks = progressBlocks(ff.stdout)
        let ffKeys = try XCTUnwrap(ffBlocks.first, "ffmpeg wrote no -progress block: \(ff.stdout)").map(\.key)
        assertFormats(ffBlocks, "ffmpeg 5.1 itself")

        let output = scratch("out.mp4")
        let r = try gpuencode([input.path, output.path, "-progress", "pipe:1", "--stats-period", "0.1"] + Self.fast)
        XCTAssertEqual(r.status, 0, r.summary)
        let blocks = progressBlocks(r.stdout)
        XCTAssertGreaterThanOrEqual(blocks.count, 1, r.stdout)
        XCTAssertEqual(r.stdout.split(separator: "\n").filter { !$0.contains("=") }, [], "stdout carries only key=value lines")
        for block in blocks { XCTAssertEqual(block.map(\.key), ffKeys, "keys and order as ffmpeg 5.1's") }
        assertFormats(blocks, "gpuencode")
        XCTAssertEqual(blocks.filter { value($0, "progress") == "end" }.count, 1, "one progress=end")
        let last = try XCTUnwrap(blocks.last)
        XCTAssertEqual(value(last, "progress"), "end")
        let frames = try Oracle.frameTimes(output).count
        XCTAssertEqual(value(last, "frame").flatMap { Int($0) }, frames, "progress=end's frame is ffprobe's count of the output")
        XCTAssertEqual(value(last, "total_size").flatMap { Int($0) }, try fileSize(output), "total_size at the end is the file's size")
        XCTAssertEqual(value(last, "out_time_us"), value(last, "out_time_ms"), "ffmpeg 5.1 writes microseconds under both names")
        let us = Double(value(last, "out_time_us") ?? "") ?? -1
        let duration = try XCTUnwrap(Oracle.frameTimes(output).last) + 1.0 / 25
        XCTAssertEqual(us / 1e6, duration, accuracy: 0.001, "out_time at the end is the video's end (ffprobe: \(duration) s)")
        // Matroska too: the end block's frame and total_size are ffprobe's count and the file's size.
        let mkv = scratch("out.mkv")
        let m = try gpuencode([input.path, mkv.path, "-q", "-progress", "pipe:1"] + Self.fast)
        XCTAssertEqual(m.status, 0, m.summary)
        let mkvEnd = try XCTUnwrap(progressBlocks(m.stdout).last, m.stdout)
        XCTAssertEqual(value(mkvEnd, "progress"), "end")
        XCTAssertEqual(value(mkvEnd, "frame").flatMap { Int($0) }, try Oracle.frameTimes(mkv).count)
        XCTAssertEqual(value(mkvEnd, "total_size").flatMap { Int($0) }, try fileSize(mkv))
        var previous = -1
        for block in blocks {
            let f = Int(value(block, "frame") ?? "") ?? -2
            XCTAssertGreaterThanOrEqual(f, previous, "frame never goes back")
            previous = f
        }
    }

    /// Frames are counted as they come out of the encoder: at every block the file already holds
    /// the first `frame` packets (ffprobe's packet sizes summed), which counting the frames going in
    /// (x264 medium holds ~40 in its lookahead) breaks. No audio, so nothing waits to be interleaved.
    func testFramesAreCountedOutOfTheEncoder() throws {
        let input = try clip("in.mp4", seconds: 4, audio: false)
        let output = scratch("out.mp4")
        let r = try gpuencode([input.path, output.path, "-progress", "pipe:1", "--stats-period", "0.02", "--speed", "medium"])
        XCTAssertEqual(r.status, 0, r.summary)
        let packets = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "packet=size,pts", output.path])["packets"] as? [[String: Any]] ?? []
        // Packets in decoding (file) order, as muxed.
        let sizes = packets.compactMap { ($0["size"] as? String).flatMap { Int($0) } ?? ($0["size"] as? Int) }
        XCTAssertEqual(sizes.count, try Oracle.frameTimes(output).count)
        var checked = 0
        for block in progressBlocks(r.stdout) where value(block, "progress") == "continue" {
            guard let f = Int(value(block, "frame") ?? ""), let total = Int(value(block, "total_size") ?? ""), f > 0, f <= sizes.count else { continue }
            let needed = sizes.prefix(f).reduce(0, +)
            XCTAssertGreaterThanOrEqual(total, needed, "frame=\(f) but only \(total) bytes written; the first \(f) packets take \(needed)")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 0, "no block while encoding: \(r.stdout.prefix(500))")
        let last = try XCTUnwrap(progressBlocks(r.stdout).last)
        XCTAssertEqual(value(last, "frame").flatMap { Int($0) }, sizes.count)
    }

    /// --progress kv and json off a terminal: every kv line parses, the last says 100% and
    /// ffprobe's frame count; in json every stderr line is a JSON object, the last the end event.
    func testKVAndJSONStylesParse() throws {
        let input = try clip("in.mp4")
        let kvOut = scratch("kv.mp4")
        let kv = try gpuencode([input.path, kvOut.path, "--progress", "kv"] + Self.fast)
        XCTAssertEqual(kv.status, 0, kv.summary)
        let lines = kv.stderrLines.filter { $0.hasPrefix("progress ") }
        let fields = lines.map { line -> [String: String] in
            var out: [String: String] = [:]
            for word in line.split(separator: " ").dropFirst() {
                let pair = word.split(separator: "=", maxSplits: 1)
                XCTAssertEqual(pair.count, 2, "not key=value: \(word) in \(line)")
                if pair.count == 2 { out[String(pair[0])] = String(pair[1]) }
            }
            return out
        }
        let end = try XCTUnwrap(fields.last, kv.stderr)
        XCTAssertEqual(Set(end.keys), ["frame", "fps", "time", "percent", "eta", "speed", "size", "bitrate", "status"])
        XCTAssertEqual(end["status"], "end")
        XCTAssertEqual(end["percent"], "100.0")
        XCTAssertEqual(end["frame"].flatMap { Int($0) }, try Oracle.frameTimes(kvOut).count)
        XCTAssertEqual(end["size"].flatMap { Int($0) }, try fileSize(kvOut))
        XCTAssertEqual(kv.stderrLines.filter { !$0.hasPrefix("progress ") }.count, 1, "one more line, the final one: \(kv.stderr)")

        let jsonOut = scratch("json.mp4")
        let json = try gpuencode([input.path, jsonOut.path, "--progress", "json"] + Self.fast)
        XCTAssertEqual(json.status, 0, json.summary)
        let events = json.stderrLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(events.count, json.stderrLines.count, "every stderr line is JSON: \(json.stderr)")
        let last = try XCTUnwrap(events.last)
        XCTAssertEqual(last["event"] as? String, "end")
        XCTAssertEqual(last["frames"] as? Int, try Oracle.frameTimes(jsonOut).count)
        XCTAssertEqual(last["percent"] as? Double ?? (last["percent"] as? Int).map(Double.init), 100)
        XCTAssertEqual(last["size"] as? Int, try fileSize(jsonOut))
        XCTAssertEqual(last["output"] as? String, jsonOut.path)

        // A failure in the json style is one error event with the exit code.
        let failed = try gpuencode([scratch("missing.mp4").path, scratch("x.mp4").path, "--progress", "json"])
        XCTAssertEqual(failed.status, ExitCode.noInput, failed.summary)
        XCTAssertEqual(failed.stderrLines.count, 1, failed.stderr)
        let error = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((failed.stderrLines.first ?? "").utf8)) as? [String: Any])
        XCTAssertEqual(error["event"] as? String, "error")
        XCTAssertEqual(error["exitCode"] as? Int, Int(ExitCode.noInput))
    }

    /// -q: nothing on success, warnings still shown; with a contradicting style, a usage error.
    func testQuietKeepsWarnings() throws {
        let input = scratch("ten.mp4")
        try Oracle.makeClip(input, seconds: 0.5, audio: false, videoArguments: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le"])
        let r = try gpuencode([input.path, scratch("out.mp4").path, "-q"] + Self.fast)
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.hasPrefix("gpuencode: warning: ") && r.stderr.contains("10-bit"), r.stderr)
        // The old spelling --no-progress still works: no progress, the final line.
        let old = try gpuencode([input.path, scratch("o3.mp4").path, "--no-progress"] + Self.fast)
        XCTAssertEqual(old.status, 0, old.summary)
        XCTAssertEqual(old.stderrLines.filter { $0.hasPrefix("gpuencode: wrote ") }.count, 1, old.stderr)
        let clash = try gpuencode([input.path, scratch("o2.mp4").path, "-q", "--progress", "json"])
        assertCleanFailure(clash, exitCodes: [ExitCode.usage], mentioning: ["-q", "--progress json"])
    }

    /// The progress file: created new; an existing file kept without -y (73, one line, no output),
    /// replaced with -y; a symlink never followed (73 even with -y, the target untouched); a FIFO and
    /// a character device written as they are; the input refused; pipe:1 with --stats refused.
    func testProgressFileSafety() throws {
        let input = try clip("in.mp4", seconds: 1)
        let progress = scratch("p.txt")
        let new = try gpuencode([input.path, scratch("a.mp4").path, "--progress-url", progress.path] + Self.fast)
        XCTAssertEqual(new.status, 0, new.summary)
        let written = try String(contentsOf: progress, encoding: .utf8)
        XCTAssertEqual(progressBlocks(written).last.flatMap { value($0, "progress") }, "end", written)

        try Data("keep me\n".utf8).write(to: progress)
        let before = listing(workDirectory)
        let kept = try gpuencode([input.path, scratch("b.mp4").path, "-progress", progress.path] + Self.fast)
        assertCleanFailure(kept, exitCodes: [ExitCode.cannotCreate], mentioning: [progress.path, "-y"], outputDirectory: workDirectory, before: before)
        XCTAssertEqual(try String(contentsOf: progress, encoding: .utf8), "keep me\n")

        let replaced = try gpuencode([input.path, scratch("c.mp4").path, "-progress", progress.path, "-y"] + Self.fast)
        XCTAssertEqual(replaced.status, 0, replaced.summary)
        XCTAssertTrue(try String(contentsOf: progress, encoding: .utf8).hasPrefix("frame="))

        let victim = scratch("victim.txt")
        try Data("victim\n".utf8).write(to: victim)
        let link = scratch("link.txt")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: victim.path)
        let beforeLink = listing(workDirectory)
        let followed = try gpuencode([input.path, scratch("d.mp4").path, "-progress", link.path, "-y"] + Self.fast)
        assertCleanFailure(followed, exitCodes: [ExitCode.cannotCreate], mentioning: [link.path, "symbolic link"], outputDirectory: workDirectory, before: beforeLink)
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "victim\n", "the symlink's target was written")

        let fifo = scratch("fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let received = Locked("")
        let reader = Thread {
            let text = (FileHandle(forReadingAtPath: fifo.path)?.readDataToEndOfFile()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            received.withLock { $0 = text }
        }
        reader.start()
        let viaFIFO = try gpuencode([input.path, scratch("e.mp4").path, "-progress", fifo.path] + Self.fast)
        XCTAssertEqual(viaFIFO.status, 0, viaFIFO.summary)
        for _ in 0..<100 where received.withLock({ $0.isEmpty }) { usleep(50_000) }
        XCTAssertEqual(progressBlocks(received.withLock { $0 }).last.flatMap { value($0, "progress") }, "end", "the FIFO's reader got the blocks")

        let device = try gpuencode([input.path, scratch("f.mp4").path, "-progress", "/dev/null"] + Self.fast)
        XCTAssertEqual(device.status, 0, device.summary)

        let onInput = try gpuencode([input.path, scratch("g.mp4").path, "-progress", input.path, "-y"] + Self.fast)
        XCTAssertEqual(onInput.status, ExitCode.usage, onInput.summary)
        XCTAssertGreaterThan(try fileSize(input), 1000, "the input was not truncated")

        let stdoutTwice = try gpuencode([input.path, scratch("h.mp4").path, "-progress", "pipe:1", "--stats", "--preset", "sepia"])
        assertCleanFailure(stdoutTwice, exitCodes: [ExitCode.usage], mentioning: ["pipe:1", "--stats"])
    }

    /// Runs `arguments` on a pty of `columns` columns (python3's pty module, `stty cols`); its
    /// terminal output comes back on stdout.
    static func onTerminal(columns: Int, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
        try Oracle.run("python3", ["-c", ptyScript.replacingOccurrences(of: "COLS", with: String(columns))] + arguments, environment: environment)
    }

    static let ptyScript = """
        import os, pty, sys, select
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp("sh", ["sh", "-c", 'stty cols COLS rows 24; exec "$@"', "sh"] + sys.argv[1:])
        out = b""
        while True:
            try:
                r, _, _ = select.select([fd], [], [], 120)
                if not r: break
                d = os.read(fd, 65536)
                if not d: break
                out += d
            except OSError:
                break
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode("utf-8", "replace"))
        sys.exit(os.WEXITSTATUS(status))
        """

    /// On a 40-column terminal (a pty, `stty cols 40`) every redraw of the line fits in 39
    /// characters, and the last says 100%; the final line follows it.
    func testNarrowTerminalRedrawFits() throws {
        let input = try clip("in.mp4", seconds: 2)
        let r = try Self.onTerminal(columns: 40, [try Paths.gpuencode(), input.path, scratch("out.mp4").path] + Self.fast)
        XCTAssertEqual(r.status, 0, r.summary + r.stdout)
        let segments = r.stdout.replacingOccurrences(of: "\r\n", with: "\n").split(whereSeparator: { $0 == "\r" || $0 == "\n" })
            .map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }
        let redraws = segments.filter { $0.hasPrefix("frame=") }
        XCTAssertFalse(redraws.isEmpty, r.stdout)
        for line in redraws { XCTAssertLessThanOrEqual(line.count, 39, "wider than the terminal: \(line)") }
        XCTAssertTrue(redraws.last?.contains("100.0%") == true, "\(redraws.last ?? "")")
        XCTAssertTrue(segments.last?.hasPrefix("gpuencode: wrote ") == true, "\(segments.last ?? "")")

        // Off a terminal (no TIOCGWINSZ) --progress terminal takes the width from $COLUMNS.
        let piped = try gpuencode([input.path, scratch("piped.mp4").path, "--progress", "terminal"] + Self.fast, environment: ["COLUMNS": "30"])
        XCTAssertEqual(piped.status, 0, piped.summary)
        let pipedRedraws = piped.stderr.split(whereSeparator: { $0 == "\r" || $0 == "\n" })
            .map { $0.replacingOccurrences(of: "\u{1B}[K", with: "") }.filter { $0.hasPrefix("frame=") }
        XCTAssertFalse(pipedRedraws.isEmpty, piped.stderr)
        for line in pipedRedraws { XCTAssertLessThanOrEqual(line.count, 29, "wider than COLUMNS=30: \(line)") }
    }
}

/// The batch's ETA weighs jobs by their length (BatchETA), against the arithmetic by hand.
final class BatchETATests: XCTestCase {
    /// Three 0.5 s clips done in 1.5 s, a 16 s one just started: 16 s of media left at 1 s of media
    /// per second is 16 s. Counting jobs (3 of 4 done) said 0.5 s: the "0:02 with 16 s to go" of the issue.
    func testJobsOfVeryDifferentLengths() {
        let e = BatchETA.estimate(finished: [0.5, 0.5, 0.5], running: [(position: 0, total: 16)], notStarted: 0, elapsed: 1.5)
        XCTAssertEqual(e.eta ?? -1, 16, accuracy: 1e-9, "media left / media per second")
        XCTAssertEqual(e.fraction, 1.5 / 17.5, accuracy: 1e-9)
        let byCount = 1.5 * (1 - 0.75) / 0.75
        XCTAssertEqual(byCount, 0.5, accuracy: 1e-9, "the old estimate, for the record")
        // Half way through the long one (9.5 s of 17.5 done in 9.5 s): 8 s left.
        let later = BatchETA.estimate(finished: [0.5, 0.5, 0.5], running: [(position: 8, total: 16)], notStarted: 0, elapsed: 9.5)
        XCTAssertEqual(later.eta ?? -1, 8, accuracy: 1e-9)
    }

    /// Jobs not started (or of unknown length) weigh the mean of the known lengths.
    func testUnknownLengthsWeighTheMean() {
        let e = BatchETA.estimate(finished: [2, 4], running: [(position: 1, total: nil)], notStarted: 2, elapsed: 7)
        // Mean 3: running 3, two not started 6; total 6 + 3 + 6 = 15, done 7, 1 media s per s.
        XCTAssertEqual(e.totalMedia, 15, accuracy: 1e-9)
        XCTAssertEqual(e.doneMedia, 7, accuracy: 1e-9)
        XCTAssertEqual(e.eta ?? -1, 8, accuracy: 1e-9)
        XCTAssertNil(BatchETA.estimate(finished: [], running: [(position: 0, total: nil)], notStarted: 3, elapsed: 1).eta)
    }
}
