import Foundation
import XCTest

// The trim tests' source clip and run (TrimTests, TrimMatroskaTests).
extension BatchTestCase {
    /// `seconds` of testsrc2 at 25 fps with B-frames and a 2 s GOP, and pink noise in `audio`, so audio
    /// content can be located by correlation (a sine repeats every period).
    func makeTrimSource(_ name: String = "src.mp4", seconds: Int = 6, audio: [String] = ["-c:a", "aac"]) throws -> URL {
        let file = scratch(name)
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=\(seconds)",
                                         "-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=48000:amplitude=0.3:seed=7:duration=\(seconds)",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "50", "-pix_fmt", "yuv420p"] + audio + [file.path])
        return file
    }

    /// A transcode at ultrafast with -y that must succeed.
    @discardableResult
    func trimTranscode(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        let r = try gpuencode(arguments + ["--speed", "ultrafast", "-y"])
        XCTAssertEqual(r.status, ExitCode.ok, r.summary, file: file, line: line)
        return r
    }
}
