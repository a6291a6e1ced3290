import Foundation
import XCTest

/// Video without a matrix tag is read as players read it (mpv, libplacebo's
/// `pl_color_system_guess_ycbcr`, browsers): BT.709 when at least 1280 wide or more than 576 tall,
/// BT.601 otherwise; `-v` says which it guessed. The oracle is swscale told the matrix explicitly.
/// Before: every untagged clip was read as BT.601, so an untagged 1280x720 clip came out shifted
/// (its identity output converted from BT.601 to BT.709).
final class UntaggedMatrixTests: GPUEncodeTestCase {
    func testHDIsReadAsBT709() throws {
        try check(size: "1280x720", matrix: "bt709", line: "guessed bt709 (untagged, HD by size)")
    }

    func testSDIsReadAsBT601() throws {
        try check(size: "640x480", matrix: "bt601", line: "guessed bt601 (untagged, SD by size)")
    }

    /// Taller than 576 is HD too, whatever the width.
    func testTallIsReadAsBT709() throws {
        try check(size: "720x578", matrix: "bt709", line: "guessed bt709 (untagged, HD by size)")
    }

    func testTaggedIsNotGuessed() throws {
        let clip = scratch("tagged.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25", "-frames:v", "2",
                                         "-pix_fmt", "yuv420p", "-colorspace", "smpte170m", "-c:v", "ffv1", clip.path])
        let result = try gpuencode([clip.path, scratch("tagged-out.mkv").path, "--crf", "0", "--x264-preset", "ultrafast", "-v"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertFalse(result.stderr.contains("guessed"), result.stderr)
        XCTAssertTrue(result.stderr.contains("bt601 limited range"), result.stderr)
    }

    private func check(size: String, matrix: String, line: String, file: StaticString = #filePath, line testLine: UInt = #line) throws {
        let clip = scratch("untagged-\(size).mkv")
        // testsrc2 drawn in Y'CbCr, stored losslessly with no colour tags.
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25", "-frames:v", "2",
                                         "-pix_fmt", "yuv420p", "-c:v", "ffv1", clip.path])
        XCTAssertEqual(try Oracle.streams(clip).first?.colorSpace ?? "unknown", "unknown", "the clip must be untagged", file: file, line: testLine)

        let ours = scratch("untagged-\(size)-out.mkv")
        let result = try gpuencode([clip.path, ours.path, "--crf", "0", "--x264-preset", "ultrafast", "-v"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary, file: file, line: testLine)
        guard result.status == ExitCode.ok else { return }
        XCTAssertTrue(result.stderr.contains("\(matrix) limited range, matrix \(line)"), "-v: \(result.stderr)", file: file, line: testLine)
        // The output is BT.709 and tagged so.
        let tags = try XCTUnwrap(try Oracle.streams(ours).first)
        XCTAssertEqual([tags.colorSpace, tags.colorPrimaries, tags.colorTransfer], ["bt709", "bt709", "bt709"], file: file, line: testLine)
        // swscale, told the guessed matrix, to BT.709 (it converts through R'G'B' with chroma repeated,
        // not interpolated, so even the right matrix is only about 41 dB from ours when it changes the
        // matrix: docs/editing.md; a wrong matrix is far further).
        let reference = scratch("untagged-\(size)-reference.mkv")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", clip.path, "-vf",
                                         "scale=in_color_matrix=\(matrix):in_range=tv:out_color_matrix=bt709:out_range=tv,format=yuv420p",
                                         "-c:v", "ffv1", reference.path])
        let score = try Oracle.planePSNR(ours, reference)
        XCTAssertGreaterThanOrEqual(score[0], 40, "Y against swscale told \(matrix): \(score)", file: file, line: testLine)
        let other = matrix == "bt709" ? "bt601" : "bt709"
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", clip.path, "-vf",
                                         "scale=in_color_matrix=\(other):in_range=tv:out_color_matrix=bt709:out_range=tv,format=yuv420p",
                                         "-c:v", "ffv1", reference.path])
        let wrong = try Oracle.planePSNR(ours, reference)
        print("untagged \(size): Y/Cb/Cr \(score) dB against swscale told \(matrix), \(wrong) told \(other)")
        XCTAssertGreaterThan(score[0], wrong[0] + 5, "Y closer to \(matrix) than to \(other): \(score) against \(wrong)", file: file, line: testLine)

        // --preset none does not touch the pixels and keeps the input's (absent) tags: a player guesses the same.
        let copied = scratch("untagged-\(size)-none.mkv")
        let none = try gpuencode([clip.path, copied.path, "--preset", "none", "--crf", "0", "--x264-preset", "ultrafast"])
        XCTAssertEqual(none.status, ExitCode.ok, none.summary, file: file, line: testLine)
        XCTAssertEqual(try Oracle.streams(copied).first?.colorSpace ?? "unknown", "unknown", file: file, line: testLine)
    }
}
