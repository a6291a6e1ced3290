import Foundation
import XCTest

/// Inputs that differ from the usual 8-bit 4:2:0 BT.709 H.264 in pixel format, colour tags, size, metadata or
/// aspect ratio, and the output containers and progress reporting, all on small clips made by ffmpeg here.
final class FormatTests: GPUEncodeTestCase {
    // MARK: - Pixel formats

    // Each minimum is about 2 dB under what llvmpipe measured against the reference below (zimg, both pictures
    // box-averaged to a quarter size, `smoothedPSNR`, so the chroma filters' own differences at sharp edges do
    // not count), noted beside it. A colour-matrix or range mistake moves whole areas and still scores far
    // lower: the full-range clip read as limited range scores 27.3 dB (63.4 read right), the untagged clip read
    // as BT.709 24.2 dB (50.3 read as BT.601).

    func testYUV422p() throws {
        // Measured 53.1 dB.
        try checkPixelFormat("yuv422p", encoder: Self.x264, minimumPSNR: 51)
    }

    func testYUV444p() throws {
        // Measured 49.4 dB (zimg's 4:4:4 to 4:2:0 chroma filter is not ours).
        try checkPixelFormat("yuv444p", encoder: Self.x264, minimumPSNR: 47.5)
    }

    func testYUV420p10le() throws {
        // Measured 56.0 dB.
        try checkPixelFormat("yuv420p10le", encoder: Self.x264, minimumPSNR: 54, tenBit: true)
    }

    func testYUV422p10le() throws {
        // Measured 51.5 dB.
        try checkPixelFormat("yuv422p10le", encoder: Self.ffv1, minimumPSNR: 49.5, tenBit: true)
    }

    func testFullRangeYUVJ420p() throws {
        // Measured 63.4 dB (read as limited range: 27.3).
        try checkPixelFormat("yuvj420p", range: "pc", encoder: Self.x264, minimumPSNR: 61)
    }

    func testUntaggedIsReadAsBT601LimitedRange() throws {
        // Measured 50.3 dB (read as BT.709: 24.2).
        try checkPixelFormat("yuv420p", matrix: "bt601", tagged: false, encoder: Self.x264, minimumPSNR: 48)
    }

    // MARK: - Size and aspect ratio

    func testOddSizeIsCroppedNotScaled() throws {
        let input = scratch("odd.mkv")
        // testsrc2 rounds odd sizes down itself, so the odd size comes from scaling; ffv1 because libx264
        // refuses odd 4:2:0 sizes.
        try Oracle.makeClip(input, audio: false, videoArguments: ["-vf", "scale=161:121,format=yuv420p", "-c:v", "ffv1"])
        let inputVideo = try XCTUnwrap(try Oracle.streams(input).first { $0.codecType == "video" })
        XCTAssertEqual([inputVideo.width, inputVideo.height], [161, 121], "the input is not the odd size under test")

        let output = scratch("odd-out.mkv")
        let result = try gpuencode([input.path, output.path] + Self.lossless)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }

        let video = try XCTUnwrap(try Oracle.streams(output).first { $0.codecType == "video" })
        XCTAssertEqual(video.width, 160)
        XCTAssertEqual(video.height, 120)
        XCTAssertEqual(try Oracle.frameTimes(output).count, try Oracle.frameTimes(input).count, "frame count")

        // A 160x120 output could also be a rescale; only the crop keeps each pixel where it was, and a rescale
        // scores about 26 dB against the cropped reference. Measured 47.9 dB.
        let reference = try makeReference(input, matrix: "bt601", range: "tv", crop: "crop=160:120:0:0")
        let score = try Self.smoothedPSNR(output, reference)
        print("PSNR odd 161x121 cropped: \(score) dB")
        XCTAssertGreaterThanOrEqual(score, 46, "the output is not the input's top-left 160x120: \(score) dB (measured 47.9)")
    }

    func testSampleAspectRatioIsKept() throws {
        let input = scratch("anamorphic.mp4")
        try Oracle.makeClip(input, audio: false, videoArguments: ["-vf", "setsar=4/3,format=yuv420p",
                                                                  "-c:v", "libx264", "-preset", "ultrafast"])
        XCTAssertEqual(try Self.sampleAspectRatio(input), "4:3", "the input is not anamorphic")

        // Each container stores the aspect ratio its own way.
        for container in ["mp4", "mkv", "mov"] {
            let output = scratch("anamorphic-out.\(container)")
            let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast"])
            XCTAssertEqual(result.status, ExitCode.ok, "\(container): \(result.summary)")
            guard result.status == ExitCode.ok else { continue }
            XCTAssertEqual(try Self.sampleAspectRatio(output), "4:3", container)
        }
    }

    // MARK: - Metadata

    func testMetadataKeptInMP4() throws {
        try checkMetadataKept(container: "mp4")
    }

    func testMetadataKeptInMKV() throws {
        try checkMetadataKept(container: "mkv")
    }

    // MARK: - Progress

    func testProgressLinesWhenAsked() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input)
        let output = scratch("out.mp4")
        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast", "--progress"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }

        let progress = result.stderrLines.filter { $0.hasPrefix("progress frame=") }
        let last = try XCTUnwrap(progress.last, "no progress line on stderr: \(result.stderr)")
        let fields = Self.fields(last)
        XCTAssertEqual(fields["status"], "end", last)
        XCTAssertEqual(fields["percent"].flatMap(Double.init), 100, last)
        XCTAssertEqual(fields["frame"].flatMap(Int.init), try Oracle.frameTimes(output).count,
                       "the final count is not the number of frames written: \(last)")
    }

    /// Off a terminal a success prints its one "wrote" line and no progress (issue 14); -q nothing.
    func testOneLineOnSuccessWithoutProgress() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input)
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertEqual(result.stderrLines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.hasPrefix("gpuencode: wrote "), result.stderr)
        XCTAssertEqual(result.stdout, "")
        let quiet = try gpuencode([input.path, scratch("q.mp4").path, "--x264-preset", "ultrafast", "-q"])
        XCTAssertEqual(quiet.status, ExitCode.ok, quiet.summary)
        XCTAssertEqual(quiet.stderr, "", "-q prints nothing on success")
        XCTAssertEqual(quiet.stdout, "")
    }

    // MARK: - MP4-family containers

    func testOverwritesExistingMOVWithY() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input)
        let output = scratch("out.mov")
        try Data("not a movie\n".utf8).write(to: output)

        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast", "-y"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        guard result.status == ExitCode.ok else { return }
        try checkMP4Family(output)
        XCTAssertEqual(listing(workDirectory), ["in.mp4", "out.mov"], "temporary files left behind")
    }

    /// MP4-family outputs read back and carry their index before the media (faststart).
    func testM4VAndMP4OutputsAreFaststart() throws {
        let input = scratch("in.mp4")
        try Oracle.makeClip(input)
        for name in ["out.m4v", "out.mp4"] {
            let output = scratch(name)
            let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast"])
            XCTAssertEqual(result.status, ExitCode.ok, "\(name): \(result.summary)")
            guard result.status == ExitCode.ok else { continue }
            try checkMP4Family(output)
        }
    }

    // MARK: - Helpers

    private static let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "12"]
    private static let ffv1 = ["-c:v", "ffv1"]
    /// crf 0 makes the encode lossless, so a PSNR score measures the colour path alone.
    private static let lossless = ["--crf", "0", "--x264-preset", "ultrafast"]

    /// Makes a testsrc2 clip in `pixelFormat` whose samples really are in `matrix`/`range` (ffmpeg's tags alone
    /// would not convert them), tagged as such unless `tagged` is false, transcodes it losslessly and checks
    /// the output's format, frame count and picture.
    private func checkPixelFormat(_ pixelFormat: String, matrix: String = "bt709", range: String = "tv",
                                  tagged: Bool = true, encoder: [String], minimumPSNR: Double, tenBit: Bool = false,
                                  file: StaticString = #filePath, line: UInt = #line) throws {
        let input = scratch("\(pixelFormat).mkv")
        var arguments = ["-vf", "scale=out_color_matrix=\(matrix):out_range=\(range),format=\(pixelFormat)"]
        if tagged {
            arguments += ["-color_primaries", matrix, "-color_trc", matrix, "-colorspace", matrix, "-color_range", range]
        }
        try Oracle.makeClip(input, audio: false, videoArguments: arguments + encoder)
        let source = try XCTUnwrap(try Oracle.streams(input).first { $0.codecType == "video" })
        XCTAssertEqual(source.pixelFormat, pixelFormat, "the input is not the format under test", file: file, line: line)
        XCTAssertEqual(source.colorSpace, tagged ? matrix : nil, "the input's matrix tag", file: file, line: line)

        let output = scratch("\(pixelFormat)-out.mkv")
        let result = try gpuencode([input.path, output.path] + Self.lossless)
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else { return }

        // Warnings are printed by default, so no -v is needed to see this one.
        let warned = result.stderrLines.contains { $0.contains("10-bit") }
        XCTAssertEqual(warned, tenBit, "10-bit warning expected: \(tenBit); stderr: \(result.stderr)", file: file, line: line)

        let video = try XCTUnwrap(try Oracle.streams(output).first { $0.codecType == "video" }, file: file, line: line)
        XCTAssertEqual(video.pixelFormat, "yuv420p", file: file, line: line)
        XCTAssertEqual(video.colorSpace, "bt709", "color_space", file: file, line: line)
        XCTAssertEqual(video.colorPrimaries, "bt709", "color_primaries", file: file, line: line)
        XCTAssertEqual(video.colorTransfer, "bt709", "color_transfer", file: file, line: line)
        XCTAssertEqual(video.colorRange, "tv", "color_range", file: file, line: line)
        // PSNR pairs frames by index, which is only meaningful when both have the same frames.
        XCTAssertEqual(try Oracle.frameTimes(output).count, try Oracle.frameTimes(input).count, "frame count",
                       file: file, line: line)

        let reference = try makeReference(input, matrix: matrix, range: range)
        let score = try Self.smoothedPSNR(output, reference)
        print("PSNR \(pixelFormat) (\(tagged ? "tagged" : "untagged") \(matrix) \(range)): \(score) dB")
        XCTAssertGreaterThanOrEqual(score, minimumPSNR, "\(pixelFormat): \(score) dB against zimg", file: file, line: line)
    }

    /// zimg's (ffmpeg's `zscale`) rendering of `input` as BT.709 limited-range 4:2:0. The default preset is
    /// identity, which is transparent (no clamp to the R'G'B' cube: DESIGN.md), so the reference converts
    /// matrix and range in float without clamping either, rather than through swscale's 8-bit gbrp (which
    /// clips testsrc2's out-of-gamut edge colours and cost 1.2 to 2.3 dB against a transparent output). The
    /// chroma positions are the README's MPEG-2 "left" siting: a centred reading alone brought the 4:4:4 clip
    /// down to 36.9 dB (and 4:2:0 sources to about 45.7).
    /// PSNR of the two pictures each box-averaged to a quarter of their size: what a colour-matrix, range or
    /// position mistake changes (it moves whole areas), without the chroma filters' own difference at sharp
    /// edges (ChromaFidelityTests compares those).
    private static func smoothedPSNR(_ a: URL, _ b: URL) throws -> Double {
        let graph = "[0:v]settb=1/30,setpts=N,scale=iw/4:ih/4:flags=area[a];[1:v]settb=1/30,setpts=N,scale=iw/4:ih/4:flags=area[b];[a][b]psnr"
        let result = try Oracle.runChecked("ffmpeg", ["-nostdin", "-hide_banner", "-nostats", "-i", a.path, "-i", b.path,
                                                      "-lavfi", graph, "-f", "null", "-"])
        let line = try XCTUnwrap(result.stderr.split(whereSeparator: \.isNewline).last { $0.contains("PSNR y:") }, result.stderr)
        let figure = line[try XCTUnwrap(line.range(of: "average:")).upperBound...].prefix { !$0.isWhitespace }
        return try XCTUnwrap(Double(figure), String(line))
    }

    private func makeReference(_ input: URL, matrix: String, range: String, crop: String? = nil) throws -> URL {
        let reference = scratch("reference-\(input.deletingPathExtension().lastPathComponent).mkv")
        let zimgMatrix = ["bt709": "709", "bt601": "170m"][matrix]!, zimgRange = range == "pc" ? "full" : "limited"
        let chain = (crop.map { [$0] } ?? []) + [
            "zscale=matrixin=\(zimgMatrix):rangein=\(zimgRange):chromalin=left:matrix=709:range=limited:chromal=left",
            "format=yuv420p",
        ]
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", input.path, "-map", "0:v:0",
                                         "-vf", chain.joined(separator: ","), "-fps_mode", "passthrough",
                                         "-c:v", "ffv1", reference.path])
        return reference
    }

    private func checkMetadataKept(container: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let input = scratch("tagged.mp4")
        try Oracle.makeClip(input, videoArguments: Oracle.defaultVideoArguments + [
            "-metadata", "title=Test title", "-metadata", "creation_time=2020-01-02T03:04:05Z",
            "-metadata:s:a:0", "language=fra", "-metadata:s:v:0", "language=eng",
        ])
        let output = scratch("tagged-out.\(container)")
        let result = try gpuencode([input.path, output.path, "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: line)
        guard result.status == ExitCode.ok else { return }

        let json = try Oracle.ffprobeJSON(["-show_entries", "format_tags:stream=codec_type:stream_tags", output.path])
        let format = (json["format"] as? [String: Any])?["tags"] as? [String: Any] ?? [:]
        XCTAssertEqual(format["title"] as? String, "Test title", "format tags: \(format)", file: file, line: line)
        // Matroska and MP4 write the time with different precision; the second is what must survive.
        let created = format["creation_time"] as? String ?? ""
        XCTAssertTrue(created.hasPrefix("2020-01-02T03:04:05"), "creation_time: \(format)", file: file, line: line)

        let streams = json["streams"] as? [[String: Any]] ?? []
        func language(_ type: String) -> String? {
            let stream = streams.first { $0["codec_type"] as? String == type }
            return (stream?["tags"] as? [String: Any])?["language"] as? String
        }
        XCTAssertEqual(language("audio"), "fra", "audio stream tags: \(streams)", file: file, line: line)
        XCTAssertEqual(language("video"), "eng", "video stream tags: \(streams)", file: file, line: line)
    }

    /// Readable by ffprobe with both streams, and the index (moov) ahead of the media data (mdat).
    private func checkMP4Family(_ output: URL, file: StaticString = #filePath, line: UInt = #line) throws {
        let types = try Oracle.streams(output).map(\.codecType)
        XCTAssertEqual(types.sorted(), ["audio", "video"], "streams of \(output.lastPathComponent)", file: file, line: line)

        let boxes = try Self.topLevelBoxes(output)
        let moov = boxes.first { $0.type == "moov" }?.offset
        let mdat = boxes.first { $0.type == "mdat" }?.offset
        let layout = boxes.map { "\($0.type)@\($0.offset)" }.joined(separator: " ")
        let moovOffset = try XCTUnwrap(moov, "no moov box: \(layout)", file: file, line: line)
        let mdatOffset = try XCTUnwrap(mdat, "no mdat box: \(layout)", file: file, line: line)
        XCTAssertLessThan(moovOffset, mdatOffset, "not faststart: \(layout)", file: file, line: line)
    }

    /// The top-level ISO BMFF boxes, walked by their sizes rather than searched for, so that the bytes "moov"
    /// or "mdat" inside a payload cannot be mistaken for a box.
    private static func topLevelBoxes(_ file: URL) throws -> [(type: String, offset: Int)] {
        let bytes = [UInt8](try Data(contentsOf: file))
        func integer(at offset: Int, width: Int) -> Int {
            bytes[offset..<offset + width].reduce(0) { $0 << 8 | Int($1) }
        }
        var boxes: [(type: String, offset: Int)] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            var size = integer(at: offset, width: 4)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if size == 1, offset + 16 <= bytes.count {
                size = integer(at: offset + 8, width: 8)
            } else if size == 0 {
                size = bytes.count - offset
            }
            guard size >= 8 else { throw OracleError("box \(type) at \(offset) in \(file.path) has size \(size)") }
            boxes.append((type, offset))
            offset += size
        }
        return boxes
    }

    private static func sampleAspectRatio(_ file: URL) throws -> String? {
        let json = try Oracle.ffprobeJSON(["-select_streams", "v:0", "-show_entries", "stream=sample_aspect_ratio", file.path])
        return (json["streams"] as? [[String: Any]])?.first?["sample_aspect_ratio"] as? String
    }

    /// `key=value` words of a progress line.
    private static func fields(_ line: String) -> [String: String] {
        var fields: [String: String] = [:]
        for word in line.split(separator: " ") {
            let pair = word.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { fields[String(pair[0])] = String(pair[1]) }
        }
        return fields
    }
}
