import Foundation
import XCTest

/// Every shared clip that has video and audio, into .mp4 with the default `--audio auto`, judged by
/// ffprobe and ffmpeg: streams MP4 players play (AAC, MP3, AC-3) are copied packet for packet (same
/// MD5 of every packet); the others (Vorbis, Opus) become AAC that decodes cleanly, starts at the
/// input's first sample within 1 ms and ends within one AAC frame of the input's end.
final class SharedClipAudioTests: GPUEncodeTestCase {
    static let clips = [
        "h264_aac51_1080p_bbb_rot90_2s.mp4", "h264_aac51_720p_bbb_5s.mp4", "h264_aac_1080p_deer_1s.mp4",
        "h264_aac_360p_rooftop_17s.mp4", "h264_aac_480p_cup_8s.mp4", "h264_aac_720p_bframes_editlist_1s.mp4",
        "h264_ac3_srt.mkv", "h264_mp3_480p_box_damaged_idr.mp4", "h264_vorbis.mkv",
        "hevc10_hlg_aac_1080p_editlist_bframes_rot90.mp4", "iphone4s_h264_aac_rot90_2s.mov",
        "iphone_hevc10_hlg_dolbyvision_rot90_0.1s.mov", "phone_4k60_h264_aac_rot90_0.3s.mp4", "phone_h264_aac_vfr_rot180_2s.mp4",
        "vp8_vorbis_720p_bbb_30s.webm", "vp9_opus_180p_bbb_5s.webm", "vp9_opus_720p_no_duration.webm",
    ]

    func audioCodecs(_ file: URL) throws -> [String] {
        let json = try Oracle.ffprobeJSON(["-select_streams", "a", "-show_entries", "stream=codec_name", file.path])
        return (json["streams"] as? [[String: Any]] ?? []).compactMap { $0["codec_name"] as? String }
    }

    func testEverySharedClipWithAudioIntoMP4() throws {
        for name in Self.clips {
            let input = try Paths.media(name)
            let output = scratch("\(name).mp4")
            let r = try gpuencode([input.path, output.path, "--preset", "none", "--speed", "ultrafast", "--crf", "40"], timeout: 300)
            XCTAssertEqual(r.status, 0, "\(name): \(r.summary)")
            guard r.status == 0 else { continue }
            let inCodecs = try audioCodecs(input)
            let expected = inCodecs.map { ["aac", "mp3", "ac3"].contains($0) ? $0 : "aac" }
            XCTAssertEqual(try audioCodecs(output), expected, name)
            for (n, codec) in inCodecs.enumerated() {
                if codec == expected[n] {
                    XCTAssertEqual(try Oracle.audioMD5(output, index: n), try Oracle.audioMD5(input, index: n), "\(name) a:\(n) copied")
                    continue
                }
                XCTAssertEqual(try AudioOracle.decodeErrors(output), "", name)
                let before = try AudioOracle.Timeline(input, track: n)
                let after = try AudioOracle.Timeline(output, track: n)
                XCTAssertEqual(after.start, before.start, accuracy: 0.001, "\(name) a:\(n): first sample")
                let frame = 1024.0 / 44100
                XCTAssertLessThanOrEqual(abs(after.end - before.end), frame + 0.001, "\(name) a:\(n): end \(after.end) against \(before.end)")
                XCTAssertEqual(r.stderrLines.filter { $0.contains("is re-encoded to AAC") }.count, 1, "\(name): \(r.stderr)")
            }
        }
    }
}
