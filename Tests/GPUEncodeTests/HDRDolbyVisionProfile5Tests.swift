import Foundation
import XCTest

// Dolby Vision profile 5 (no backward-compatible base layer: an IPTPQc2 signal that only its RPU
// makes into a picture) against libplacebo applying the RPU. No profile-5 clip is at hand and ffmpeg
// 5.1 writes neither RPUs nor Dolby Vision records, so the test makes one: footage encoded by x265
// tagged nothing (colour primaries, transfer and matrix 2, as streaming profile 5 is), the iPhone
// clip's RPUs rewritten as profile 5's (vdr_rpu_profile 0, the IPTPQc2 colour matrices a profile-5
// RPU carries, its CRC recomputed) appended to each access unit, muxed to MP4 by ffmpeg and given a
// `dvcC` box (dv_profile 5, compatibility id 0, sample entry `dvhe`) by rewriting the boxes.
extension HDRTests {
    /// A profile-5 MP4 of 4 frames of Big Buck Bunny (`record`: with its configuration record;
    /// without, as a remux that lost it), checked by ffprobe to be what it claims.
    func makeProfile5(record: Bool) throws -> URL {
        let iphone = try Paths.media("iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov")
        let stream = scratch("p5-iphone.hevc")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", iphone.path, "-map", "0:v", "-c:v", "copy",
                                         "-bsf:v", "hevc_mp4toannexb", "-f", "hevc", stream.path])
        let rpus = try HDRTests.nalUnits(try Data(contentsOf: stream)).filter { HDRTests.nalType($0) == 62 }.map(HDRTests.profile5RPU)
        let base = scratch("p5-base.hevc")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", try Paths.media("h264_aac51_720p_bbb_5s.mp4").path, "-frames:v", "4",
                                         "-vf", "scale=1280:720,zscale=tin=bt709:t=smpte2084:pin=bt709:p=bt2020:min=bt709:m=bt2020nc:npl=1000:r=tv:agamma=0,format=yuv420p10le",
                                         "-c:v", "libx265", "-x265-params", "log-level=none:lossless=1:aud=1:bframes=0",
                                         "-bsf:v", "hevc_metadata=colour_primaries=2:transfer_characteristics=2:matrix_coefficients=2",
                                         "-f", "hevc", base.path])
        let muxed = scratch("p5-norecord.mp4")
        try HDRTests.muxWithRPUs(base, rpus: rpus, raw: scratch("p5.hevc"), into: muxed)
        var url = muxed
        if record {
            url = scratch("p5.mp4")
            try HDRTests.addingDolbyVisionRecord(try Data(contentsOf: muxed), profile: 5, compatibility: 0).write(to: url)
        }
        // What FFmpeg reads: the record (or none), no colour tags, an RPU of profile 5 on every frame.
        let video = try videoStream(url)
        XCTAssertEqual(video["color_transfer"] as? String ?? "unknown", "unknown")
        XCTAssertEqual(video["color_primaries"] as? String ?? "unknown", "unknown")
        let records = (video["side_data_list"] as? [[String: Any]] ?? []).filter { $0["side_data_type"] as? String == "DOVI configuration record" }
        XCTAssertEqual(records.count, record ? 1 : 0, "\(video)")
        if record {
            XCTAssertEqual(records.first?["dv_profile"] as? Int, 5)
            XCTAssertEqual(records.first?["dv_bl_signal_compatibility_id"] as? Int, 0)
        }
        let frames = try Oracle.ffprobeJSON(["-show_frames", "-select_streams", "v:0", url.path])["frames"] as? [[String: Any]] ?? []
        let metadata = frames.compactMap { (($0["side_data_list"] as? [[String: Any]]) ?? []).first { $0["side_data_type"] as? String == "Dolby Vision Metadata" } }
        XCTAssertEqual(metadata.count, 4, "frames with an RPU, as FFmpeg reads them")
        for m in metadata {
            XCTAssertEqual(m["vdr_rpu_profile"] as? Int, 0)
            XCTAssertEqual(m["ycc_to_rgb_matrix"] as? String, "8192/8192 799/8192 1681/8192 8192/8192 -933/8192 1091/8192 8192/8192 267/8192 -5545/8192")
            XCTAssertEqual(m["rgb_to_lms_matrix"] as? String, "17081/16384 -349/16384 -349/16384 -349/16384 17081/16384 -349/16384 -349/16384 -349/16384 17081/16384")
        }
        return url
    }

    /// Profile 5, untagged, its RPU with IPTPQc2 matrices: applied as libplacebo applies it, with
    /// and without the container's record (the RPU says profile 5 where no record does), then
    /// tone-mapped as PQ BT.2020. (Measured 52.1 dB each frame, saturation 99.8%, luma 100.2%, with
    /// --peak-detect as libplacebo's defaults; without it 32.0 dB, luma 96.9%, as the PQ stand-in
    /// for 8.1. A full-range base, video_full_range_flag 1, renders the same on both sides.) Before,
    /// the stream without a record was read as untagged SDR Y'CbCr: green and purple.
    func testDolbyVisionProfile5MatchesLibplacebo() throws {
        let input = try makeProfile5(record: true)
        let ref = try reference(input, HDRTests.libplacebo, name: "pl-p5.mkv", vulkan: true, frames: 4)
        let ours = scratch("ours-p5.mkv")
        let result = try gpuencode([input.path, ours.path, "--crf", "0", "--peak-detect", "-v"])
        XCTAssertEqual(result.status, 0, result.summary)
        XCTAssertTrue(result.stderr.contains("Dolby Vision profile 5.0: RPU applied"), result.stderr)
        XCTAssertTrue(result.stderr.contains("HDR: PQ tone-mapped to SDR BT.709 with bt2390"), result.stderr)
        try assertDolbyVisionLikeLibplacebo(ours, ref, label: "profile 5, RPU applied")
        // `preview` and a picture output apply it too (first frame, no peak detection: measured
        // saturation 98.3%, luma 97.7%).
        let png = scratch("p5-preview.png"), picture = scratch("p5-picture.png")
        XCTAssertEqual(try gpuencode(["preview", input.path, "--at", "0", "-o", png.path]).status, 0)
        XCTAssertEqual(try gpuencode([input.path, picture.path, "--start", "0"]).status, 0)
        let b = try saturationAndLuma(ref)
        for still in [png, picture] {
            let a = try saturationAndLuma(still)
            let message = "\(still.lastPathComponent): saturation \(a.saturation) vs libplacebo \(b.saturation), luma \(a.luma) vs \(b.luma)"
            print(message)
            XCTAssertLessThan(abs(a.saturation / b.saturation - 1), 0.03, message)
            XCTAssertLessThan(abs(a.luma / b.luma - 1), 0.03, message)
        }

        let bare = try makeProfile5(record: false)
        let oursBare = scratch("ours-p5-norecord.mkv")
        let bareResult = try gpuencode([bare.path, oursBare.path, "--crf", "0", "--peak-detect", "-v"])
        XCTAssertEqual(bareResult.status, 0, bareResult.summary)
        XCTAssertTrue(bareResult.stderr.contains("Dolby Vision (RPUs without a configuration record; profile 5 by its RPU): RPU applied"), bareResult.stderr)
        try assertDolbyVisionLikeLibplacebo(oursBare, try reference(bare, HDRTests.libplacebo, name: "pl-p5-norecord.mkv", vulkan: true, frames: 4),
                                            label: "profile 5 without its record, RPU applied")
    }

    /// Profile 5 has no base layer to show or keep: `--dolby-vision base` and `--hdr keep` are
    /// usage errors (64), for a movie and a picture output, and a profile-5 stream whose RPU is
    /// not read ahead (a pipe) is refused (66) rather than shown as Y'CbCr. One line each, nothing
    /// written. (Before, all three wrote the IPT signal as if it were a picture, exit 0.)
    func testDolbyVisionProfile5HasNoBaseLayer() throws {
        let input = try makeProfile5(record: true)
        let out = workDirectory.appendingPathComponent("p5-out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let cases: [([String], Int32, [String])] = [
            (["--dolby-vision", "base"], ExitCode.usage, ["has no backward-compatible base layer", "--dolby-vision base"]),
            (["--hdr", "keep"], ExitCode.usage, ["has no backward-compatible base layer", "--hdr keep"]),
            (["--hdr", "keep", "--dolby-vision", "base", "--preset", "none"], ExitCode.usage, ["--dolby-vision base"]),
        ]
        for (options, code, words) in cases {
            let result = try gpuencode([input.path, out.appendingPathComponent("x.mkv").path] + options)
            assertCleanFailure(result, exitCodes: [code], mentioning: [input.path, "Dolby Vision profile 5.0"] + words, outputDirectory: out)
        }
        let picture = try gpuencode([input.path, out.appendingPathComponent("x.png").path, "--dolby-vision", "base"])
        assertCleanFailure(picture, exitCodes: [ExitCode.usage], mentioning: ["Dolby Vision profile 5.0", "--dolby-vision base"], outputDirectory: out)
        // (Matroska, which reads from a pipe; ffmpeg copies the record into it.)
        let mkv = scratch("p5.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-c", "copy", mkv.path])
        let piped = try Oracle.run("/bin/sh", ["-c", "cat \"$0\" | \"$1\" /dev/stdin \"$2\"", mkv.path, try Paths.gpuencode(),
                                              out.appendingPathComponent("piped.mkv").path])
        assertCleanFailure(piped, exitCodes: [66], mentioning: ["Dolby Vision profile 5.0", "RPU cannot be applied"], outputDirectory: out)
    }

    /// The iPhone's RPU (profile 8.4) made a profile-5 one: vdr_rpu_profile 0 and the IPTPQc2
    /// colour matrices (ycc_to_rgb: IPT to PQ L'M'S', offsets 0, ½, ½; rgb_to_lms: the inverse of
    /// the 2% crosstalk), the fixed-width fields found by their current values and rewritten,
    /// rpu_data_crc32 (CRC-32/MPEG-2 over the payload after the 0x19 prefix) recomputed and the
    /// emulation prevention redone. (FFmpeg 5.1 does not check the CRC: a flipped byte still decodes.)
    static func profile5RPU(_ nal: Data) throws -> Data {
        // Without emulation prevention (00 00 03).
        var payload: [UInt8] = [], zeros = 0
        for b in nal.dropFirst(2) {
            if zeros >= 2 && b == 3 { zeros = 0; continue }
            payload.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        func bits(_ fields: [(Int64, Int)]) -> [UInt8] {
            fields.flatMap { v, w in (0..<w).reversed().map { UInt8((UInt64(bitPattern: v) >> UInt64($0)) & 1) } }
        }
        func matrices(_ ycc: [Int64], _ offsets: [Int64], _ lms: [Int64]) -> [UInt8] {
            bits(ycc.map { ($0, 16) } + offsets.map { ($0, 32) } + lms.map { ($0, 16) })
        }
        let old = matrices([9574, 0, 13802, 9574, -1540, -5348, 9574, 17610, 0], [16777216, 134217728, 134217728],
                           [7222, 8771, 390, 2654, 12430, 1300, 0, 422, 15962])
        let new = matrices([8192, 799, 1681, 8192, -933, 1091, 8192, 267, -5545], [0, 134217728, 134217728],
                           [17081, -349, -349, -349, 17081, -349, -349, -349, 17081])
        var stream = payload.flatMap { b in (0..<8).reversed().map { (b >> UInt8($0)) & 1 } }
        let at = (0...(stream.count - old.count)).filter { Array(stream[$0..<($0 + old.count)]) == old }
        guard at.count == 1 else { throw OracleError("the iPhone RPU's colour matrices: found \(at.count) times") }
        stream.replaceSubrange(at[0]..<(at[0] + old.count), with: new)
        payload = stride(from: 0, to: stream.count, by: 8).map { i in stream[i..<(i + 8)].reduce(0) { $0 << 1 | $1 } }
        // 0x19, rpu_type (6), rpu_format (11), vdr_rpu_profile (4): its bits are 0x78 of byte 3.
        payload[3] &= ~0x78
        var crc: UInt32 = 0xffff_ffff
        for b in payload[1..<(payload.count - 5)] {
            crc ^= UInt32(b) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04c1_1db7 : crc << 1 }
        }
        payload.replaceSubrange((payload.count - 5)..<(payload.count - 1), with: (0..<4).map { UInt8(truncatingIfNeeded: crc >> (24 - 8 * UInt32($0))) })
        var out = Data(nal.prefix(2))
        zeros = 0
        for b in payload {
            if zeros >= 2 && b <= 3 { out.append(3); zeros = 0 }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    /// An MP4 (moov after mdat, one video track) with a Dolby Vision configuration record added to
    /// its HEVC sample entry (`dvcC` up to profile 7, `dvvC` after; the entry renamed `dvhe`, as a
    /// stream without a backward-compatible base is): 1.0, the profile, level 6, RPU and base layer
    /// present, the compatibility id. Every enclosing box grows by the record's 32 bytes.
    static func addingDolbyVisionRecord(_ mp4: Data, profile: Int, compatibility: Int) throws -> Data {
        var b = [UInt8](mp4)
        func size(_ at: Int) -> Int { b[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        func child(_ name: String, in parent: Range<Int>) throws -> Int {
            var i = parent.lowerBound
            while i + 8 <= parent.upperBound {
                if String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self) == name { return i }
                i += max(size(i), 8)
            }
            throw OracleError("no \(name) box")
        }
        var path = [try child("moov", in: 0..<b.count)]
        // (Chunk offsets point into mdat, which stays where it is only before moov.)
        guard try child("mdat", in: 0..<b.count) < path[0] else { throw OracleError("moov before mdat") }
        for name in ["trak", "mdia", "minf", "stbl", "stsd"] {
            path.append(try child(name, in: (path.last! + 8)..<(path.last! + size(path.last!))))
        }
        let entry = path.last! + 16   // stsd: version and flags, entry count
        guard ["hev1", "hvc1"].contains(String(decoding: b[(entry + 4)..<(entry + 8)], as: UTF8.self)) else { throw OracleError("not an HEVC sample entry") }
        path.append(entry)
        let fields = profile << 9 | 6 << 3 | 1 << 2 | 1
        let record: [UInt8] = [0, 0, 0, 32] + Array((profile <= 7 ? "dvcC" : "dvvC").utf8) + [1, 0, UInt8(fields >> 8), UInt8(fields & 0xff), UInt8(compatibility << 4)]
            + [UInt8](repeating: 0, count: 19)
        b.insert(contentsOf: record, at: entry + size(entry))
        b.replaceSubrange((entry + 4)..<(entry + 8), with: Array("dvhe".utf8))
        for at in path {
            let grown = size(at) + record.count
            b.replaceSubrange(at..<(at + 4), with: (0..<4).map { UInt8(truncatingIfNeeded: grown >> (24 - 8 * $0)) })
        }
        return Data(b)
    }
}
