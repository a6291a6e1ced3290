import Foundation
import XCTest

/// `--fps` (issue 14) against ffmpeg's `fps` filter at its defaults (`ffmpeg -i IN -vf fps=N -fps_mode
/// passthrough`): the same number of frames and the same source frame in each. Every source frame is
/// identifiable: its left half is a flat grey of 16 + 8 * (index mod 27), its right half 16 + 8 * (index / 27),
/// coded losslessly, so a decoded output frame says which source frame it shows even after x264 at crf 23.
/// MP4 outputs must have every packet last exactly 1/N; MKV counts in milliseconds, so there each frame
/// must sit on the 1/N grid rounded to the millisecond, as ffmpeg's own MKV output does.
final class FrameRateTests: GPUEncodeTestCase {
    private static let levels = 27

    /// A clip of `seconds` at `rate` whose frames are numbered (see above); `setpts` makes it variable-rate.
    private func numbered(_ name: String, rate: String, seconds: Double, setpts: String? = nil, audio: Bool = false) throws -> URL {
        let clip = scratch(name)
        let lum = "if(lt(X,W/2),16+8*mod(N,\(Self.levels)),16+8*mod(floor(N/\(Self.levels)),\(Self.levels)))"
        var graph = "color=c=black:s=128x64:r=\(rate):d=\(seconds),format=yuv420p,geq=lum='\(lum)':cb=128:cr=128"
        // The encoder would otherwise count in 1/rate and put the times back on the grid.
        if let setpts { graph += ",settb=1/1000,setpts='\(setpts)'" }
        var arguments = ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", graph]
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-c:a", "aac"] }
        arguments += ["-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-fps_mode", "passthrough"]
            + (setpts != nil ? ["-enc_time_base", "1/1000"] : []) + [clip.path]
        try Oracle.runChecked("ffmpeg", arguments)
        return clip
    }

    /// Which source frame each decoded frame of `file` shows (ffmpeg's `filters`, if any, applied first).
    /// Frames are read as they are (-fps_mode passthrough): raw output would otherwise be made constant-rate
    /// from 0 by the ffmpeg CLI, repeating a first frame that starts later.
    private func identities(_ file: URL, filters: [String] = []) throws -> [Int] {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path] + filters
                                             + ["-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"])
        let (w, h) = (128, 64)
        let bytes = [UInt8](data)
        XCTAssertEqual(bytes.count % (w * h * 3 / 2), 0)
        // The Y plane of each frame, whose codes are the levels as written (limited range).
        return stride(from: 0, to: bytes.count, by: w * h * 3 / 2).map { start in
            var left = 0, right = 0
            for y in 0..<h {
                for x in 0..<w {
                    if x < w / 2 { left += Int(bytes[start + y * w + x]) } else { right += Int(bytes[start + y * w + x]) }
                }
            }
            func level(_ sum: Int) -> Int { Int(((Double(sum) / Double(w * h / 2) - 16) / 8).rounded()) }
            return level(left) + Self.levels * level(right)
        }
    }

    /// ffmpeg's frames for `-vf fps=RATE`.
    private func reference(_ clip: URL, _ rate: String) throws -> [Int] {
        try identities(clip, filters: ["-vf", "fps=\(rate)"])
    }

    private func packetDurations(_ file: URL) throws -> (pts: [Int], durations: [Int], timeBase: String) {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "packet=pts,duration:stream=time_base", file.path])
        let packets = (json["packets"] as? [[String: Any]] ?? [])
        let tb = ((json["streams"] as? [[String: Any]])?.first?["time_base"] as? String) ?? "?"
        let pts = packets.compactMap { ($0["pts"] as? NSNumber)?.intValue }.sorted()
        return (pts, packets.compactMap { ($0["duration"] as? NSNumber)?.intValue }, tb)
    }

    /// Runs gpuencode with --fps (or `flag`) and checks the frames against ffmpeg's, and the timing.
    @discardableResult
    private func check(_ clip: URL, rate: String, fps: (num: Int, den: Int), container: String, flag: String = "--fps",
                       extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        let name = clip.deletingPathExtension().lastPathComponent
        let out = scratch("\(name)-\(rate.replacingOccurrences(of: "/", with: "_")).\(container)")
        let result = try gpuencode([clip.path, out.path, flag, rate, "--speed", "ultrafast"] + extra)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        let ours = try identities(out), theirs = try reference(clip, rate)
        print("\(name) at \(rate) (\(container)): \(ours.count) frames, ffmpeg's fps filter \(theirs.count): \(ours)")
        XCTAssertEqual(ours.count, theirs.count, "frame count against ffmpeg -vf fps=\(rate)", file: file, line: line)
        XCTAssertEqual(ours, theirs, "the source frame shown in each output frame", file: file, line: line)
        let (pts, durations, timeBase) = try packetDurations(out)
        let period = Double(fps.den) / Double(fps.num)
        if container == "mp4" {
            // Every packet exactly one frame long, on a grid of 1/rate.
            XCTAssertEqual(Set(durations).count, 1, "constant durations, got \(Set(durations).sorted()) in \(timeBase)", file: file, line: line)
            let parts = timeBase.split(separator: "/").compactMap { Double($0) }
            let tick = parts.count == 2 ? parts[0] / parts[1] : 0
            if let d = durations.first { XCTAssertEqual(Double(d) * tick, period, accuracy: 1e-9, "\(d) ticks of \(timeBase)", file: file, line: line) }
            for (i, p) in pts.enumerated() { XCTAssertEqual(Double(p - pts[0]) * tick, Double(i) * period, accuracy: 1e-9, "frame \(i)", file: file, line: line) }
        } else {
            XCTAssertEqual(timeBase, "1/1000")
            for (i, p) in pts.enumerated() {
                XCTAssertEqual(Double(p - pts[0]), (Double(i) * period * 1000).rounded(), accuracy: 1, "frame \(i) on the 1/\(rate) grid in ms", file: file, line: line)
            }
        }
        let rates = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "stream=r_frame_rate,avg_frame_rate", out.path])
        let stream = (rates["streams"] as? [[String: Any]])?.first ?? [:]
        XCTAssertEqual(stream["r_frame_rate"] as? String, "\(fps.num)/\(fps.den)", file: file, line: line)
        return out
    }

    /// 60 to 30 drops every other frame (which ones, with MKV's millisecond times, ffmpeg's rounding decides);
    /// 24 to 30 shows every fourth frame twice; both containers.
    func testHalvingAndDuplicating() throws {
        let sixty = try numbered("sixty.mkv", rate: "60", seconds: 1)
        try check(sixty, rate: "30", fps: (30, 1), container: "mp4")
        try check(sixty, rate: "30", fps: (30, 1), container: "mkv", flag: "-r")
        let film = try numbered("film.mkv", rate: "24", seconds: 1)
        try check(film, rate: "30", fps: (30, 1), container: "mkv")
        try check(film, rate: "30", fps: (30, 1), container: "mp4", extra: ["--preset", "none"])
    }

    /// NTSC to PAL (29.97 to 25), and 25 to 30000/1001 spelt as ffmpeg's ntsc; 29.97 typed as a decimal is
    /// 2997/100, as ffmpeg reads it.
    func testNTSCAndPAL() throws {
        let ntsc = try numbered("ntsc.mp4", rate: "30000/1001", seconds: 2)
        try check(ntsc, rate: "25", fps: (25, 1), container: "mp4")
        try check(ntsc, rate: "pal", fps: (25, 1), container: "mkv")
        let pal = try numbered("pal.mkv", rate: "25", seconds: 2)
        try check(pal, rate: "ntsc", fps: (30000, 1001), container: "mp4")
        try check(pal, rate: "29.97", fps: (2997, 100), container: "mp4")
    }

    /// A variable-rate source (steps of 40 ms plus 0, 8, 16 or 24 ms) made constant; without --fps its times
    /// stay as they were (VFR is the default).
    func testVariableRateSource() throws {
        let vfr = try numbered("vfr.mkv", rate: "25", seconds: 2, setpts: "(N*0.04+0.008*mod(N,4))/TB")
        let steps = Set(zip(try Oracle.frameTimes(vfr).dropFirst(), try Oracle.frameTimes(vfr)).map { Int((($0 - $1) * 1000).rounded()) })
        XCTAssertEqual(steps, [16, 48], "the source is variable-rate")
        try check(vfr, rate: "30", fps: (30, 1), container: "mp4")
        try check(vfr, rate: "24", fps: (24, 1), container: "mkv")
        let kept = scratch("vfr-kept.mkv")
        let r = try gpuencode([vfr.path, kept.path, "--speed", "ultrafast"])
        XCTAssertEqual(r.status, ExitCode.ok, r.summary)
        XCTAssertEqual(try Oracle.frameTimes(kept), try Oracle.frameTimes(vfr), "no --fps: the source's own times")
        XCTAssertEqual(try identities(kept), Array(0..<50))
    }

    /// A real clip whose video starts 83 ms after its audio (the deer, 23.976 fps) at 30 fps: the same frame
    /// times as ffmpeg's fps filter (28 frames from 0.1 s; the ffmpeg CLI's MP4 default of -fps_mode cfr would
    /// also repeat the first frame from 0, which is not the filter's output), and the same pictures.
    func testRealClipStartsWhereFFmpegsFilterDoes() throws {
        let clip = try Paths.media("h264_aac_1080p_deer_1s.mp4")
        let ours = scratch("deer30.mp4"), theirs = scratch("deer30-ffmpeg.mkv")
        let r = try gpuencode([clip.path, ours.path, "--fps", "30", "--crf", "0", "--speed", "ultrafast"])
        XCTAssertEqual(r.status, ExitCode.ok, r.summary)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", clip.path, "-vf", "fps=30", "-fps_mode", "passthrough",
                                         "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-an", theirs.path])
        let a = try Oracle.frameTimes(ours), b = try Oracle.frameTimes(theirs)

        XCTAssertEqual(a.count, b.count)
        for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: 0.001) }
        // Frame i against frame i: the same source frames (a wrong pick costs tens of dB on moving footage).
        let psnr = try Oracle.psnr(ours, theirs)
        print("deer at 30: \(a.count) frames from \(a.first ?? -1) s; ffmpeg \(b.count) from \(b.first ?? -1) s; \(psnr) dB frame for frame")
        XCTAssertGreaterThan(psnr, 45, "the same pictures in the same order: \(psnr) dB")
    }

    /// With --deinterlace field the rate is chosen from the field-rate output (50 pictures a second from 25
    /// frames), as ffmpeg's `bwdif=send_field:deint=all,fps=30`; the encoder then counts in 1/30, not in the
    /// half ticks the field rate would use.
    func testFieldRateDeinterlacing() throws {
        let clip = try numbered("fields.mkv", rate: "25", seconds: 1)
        let out = scratch("fields30.mp4")
        let r = try gpuencode([clip.path, out.path, "--deinterlace", "field", "--fps", "30", "--speed", "ultrafast"])
        XCTAssertEqual(r.status, ExitCode.ok, r.summary)
        let ours = try identities(out)
        let theirs = try identities(clip, filters: ["-vf", "bwdif=mode=send_field:parity=tff:deint=all,fps=30"])
        print("fields at 30: \(ours)")
        XCTAssertEqual(ours, theirs)
        XCTAssertEqual(Set(try packetDurations(out).durations).count, 1)
    }

    /// Copied audio is the same packets with --fps as without, in both containers.
    func testAudioUnaffected() throws {
        let clip = try numbered("sound.mkv", rate: "50", seconds: 1, audio: true)
        for container in ["mp4", "mkv"] {
            let out = try check(clip, rate: "25", fps: (25, 1), container: container)
            XCTAssertEqual(try Oracle.audioMD5(out, index: 0), try Oracle.audioMD5(clip, index: 0), container)
        }
    }

    /// Batch: a JSON manifest's fps (a number and a string) and a CSV column; a bad rate is a usage error.
    func testBatchManifest() throws {
        let dir = scratch("b")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let clip = try numbered("b/sixty.mkv", rate: "60", seconds: 1)
        let json = dir.appendingPathComponent("jobs.json")
        try #"[{"input": "sixty.mkv", "output": "o/a.mp4", "fps": 24}, {"input": "sixty.mkv", "output": "o/b.mkv", "fps": "30000/1001"}]"#
            .write(to: json, atomically: true, encoding: .utf8)
        let quiet = ["CI_NODE_INDEX": "", "CI_NODE_TOTAL": "", "JOB_COMPLETION_INDEX": ""]
        // Outputs named in a manifest are relative to its folder.
        let out = dir.appendingPathComponent("o")
        let r = try gpuencode(["batch", "--manifest", json.path, "--speed", "ultrafast"], environment: quiet)
        XCTAssertEqual(r.status, ExitCode.ok, r.summary)
        XCTAssertEqual(try identities(out.appendingPathComponent("a.mp4")), try reference(clip, "24"))
        XCTAssertEqual(try identities(out.appendingPathComponent("b.mkv")), try reference(clip, "30000/1001"))
        let csv = dir.appendingPathComponent("jobs.csv")
        try "input,output,fps\nsixty.mkv,o/c.mp4,pal\n".write(to: csv, atomically: true, encoding: .utf8)
        let c = try gpuencode(["batch", "--manifest", csv.path, "--speed", "ultrafast"], environment: quiet)
        XCTAssertEqual(c.status, ExitCode.ok, c.summary)
        XCTAssertEqual(try identities(out.appendingPathComponent("c.mp4")), try reference(clip, "25"))
        try "input,output,fps\nsixty.mkv,d.mp4,fast\n".write(to: csv, atomically: true, encoding: .utf8)
        let bad = try gpuencode(["batch", "--manifest", csv.path, "--dry-run"], environment: quiet)
        XCTAssertEqual(bad.status, ExitCode.usage, bad.summary)
        XCTAssertTrue(bad.stderr.contains("jobs.csv:2") && bad.stderr.contains("fps"), bad.stderr)
    }

    /// Rates that are not rates are usage errors (64) naming the flag.
    func testUsageErrors() throws {
        let clip = scratch("in.mp4")
        try Oracle.makeClip(clip, seconds: 0.2, audio: false)
        for value in ["0", "-5", "abc", "30/0", "1e3", "2000"] {
            assertCleanFailure(try gpuencode([clip.path, scratch("o.mp4").path, "--fps", value]), exitCodes: [ExitCode.usage], mentioning: ["--fps"])
        }
    }
}
