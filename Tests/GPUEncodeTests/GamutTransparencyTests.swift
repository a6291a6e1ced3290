import Foundation
import XCTest

/// Camera footage holds Y'CbCr outside the R'G'B' cube (saturated greens): a transparent chain (identity, or
/// no filters, as behind the deinterlacer) must give it back, not the nearest colour inside the cube. Scored
/// against ground truth: the deer clip's frames taken as 50p, made 1080i (tinterlace, x264 lossless, TFF),
/// deinterlaced by gpuencode and by ffmpeg's bwdif, each against the progressive original, plane by plane;
/// and identity on the progressive frames against themselves beside ffmpeg's round trip through gbrp.
/// Without the deer clip, a synthetic clip whose chroma is pushed outside the cube (lutyuv) stands in.
///
/// Before (identity clamped to 0...1 in R'G'B'): deinterlaced deer Y 47.96 / all 47.09 / Cb 43.32 dB, bwdif
/// 48.18 / 49.15 / 51.93: 2 dB short of bwdif on all planes, all of it chroma.
final class GamutTransparencyTests: GPUEncodeTestCase {
    private static let bt709 = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv"]

    private func ffmpeg(_ arguments: [String]) throws {
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments)
    }

    /// 16 progressive 50p frames (lossless), and their size.
    private func original() throws -> (URL, Int, Int) {
        let out = scratch("original-50p.mkv")
        if let deer = try? Paths.media("h264_aac_1080p_deer_1s.mp4") {
            try ffmpeg(["-i", deer.path, "-an", "-frames:v", "16", "-vf", "setpts=N/50/TB,format=yuv420p", "-r", "50",
                        "-c:v", "ffv1"] + Self.bt709 + [out.path])
            return (out, 1920, 1080)
        }
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=50", "-frames:v", "16", "-vf",
                    "format=yuv420p,lutyuv=u='clip(128+(val-128)*1.8,16,240)':v='clip(128+(val-128)*1.8,16,240)'",
                    "-c:v", "ffv1"] + Self.bt709 + [out.path])
        return (out, 640, 360)
    }

    /// PSNR per plane (Y, Cb, Cr) and of all samples together, frame i against frame i.
    private func planes(_ a: RawFrames, _ b: RawFrames) -> [Double] {
        let n = min(a.count, b.count), luma = a.width * a.height, size = a.frameSize
        var sums = [0.0, 0.0, 0.0]
        a.bytes.withUnsafeBufferPointer { x in
            b.bytes.withUnsafeBufferPointer { y in
                for f in 0..<n {
                    for i in 0..<size {
                        let d = Double(Int(x[f * size + i]) - Int(y[f * size + i]))
                        sums[i < luma ? 0 : i < luma + luma / 4 ? 1 : 2] += d * d
                    }
                }
            }
        }
        func db(_ sum: Double, _ samples: Int) -> Double { sum == 0 ? 99 : 10 * log10(255 * 255 / (sum / Double(samples))) }
        let chroma = (size - luma) / 2
        return [db(sums[0], n * luma), db(sums[1], n * chroma), db(sums[2], n * chroma), db(sums.reduce(0, +), n * size)]
    }

    private func f(_ v: [Double]) -> String { v.map { String(format: "%.2f", $0) }.joined(separator: " / ") }

    func testDeinterlacedAndIdentityKeepOutOfGamutColours() throws {
        let (progressive, w, h) = try original()
        let interlaced = scratch("interlaced-tff.mp4")
        try ffmpeg(["-i", progressive.path, "-vf", "tinterlace=mode=interleave_top,setfield=tff", "-c:v", "libx264", "-qp", "0",
                    "-flags", "+ilme+ildct", "-x264-params", "tff=1"] + Self.bt709 + [interlaced.path])
        let all = try RawFrames(progressive, width: w, height: h)
        let truth = all.frames(from: 0, step: 2)
        let bwdif = planes(try RawFrames(interlaced, width: w, height: h, filter: "bwdif=mode=send_frame:parity=auto:deint=all"), truth)

        // The identity reference: ffmpeg's round trip through gbrp (BT.709 both ways, told the left siting).
        let roundTripFile = scratch("gbrp-round-trip.mkv")
        try ffmpeg(["-i", progressive.path, "-vf", "scale=in_h_chr_pos=0:in_v_chr_pos=128,format=gbrp,"
                    + "scale=out_color_matrix=bt709:out_range=tv:out_h_chr_pos=0:out_v_chr_pos=128,format=yuv420p", "-c:v", "ffv1", roundTripFile.path])
        let roundTrip = planes(try RawFrames(roundTripFile, width: w, height: h), all)

        var table: [String] = []
        for transfer in ["pbo", "client"] {
            let environment = ProcessInfo.processInfo.environment.merging(["GPUENCODE_TRANSFER": transfer]) { $1 }
            // Deinterlaced (the GPU stage has no filter but the deinterlacer: preset none).
            let deinterlaced = scratch("deinterlaced-\(transfer).mkv")
            var r = try gpuencode([interlaced.path, deinterlaced.path, "--preset", "none", "--deinterlace", "frame", "--crf", "0", "-y"],
                                  environment: environment)
            XCTAssertEqual(r.status, ExitCode.ok, r.summary)
            guard r.status == ExitCode.ok else { continue }
            let ours = planes(try RawFrames(deinterlaced, width: w, height: h), truth)
            let line = "\(transfer) deinterlaced Y/Cb/Cr/all \(f(ours)) dB; bwdif \(f(bwdif))"
            table.append(line)
            XCTAssertEqual(try RawFrames(deinterlaced, width: w, height: h).count, truth.count, line)
            XCTAssertGreaterThanOrEqual(ours[3], bwdif[3] - 1, "all planes within 1 dB of bwdif: \(line)")
            XCTAssertGreaterThanOrEqual(ours[0], bwdif[0] - 1, "luma within 1 dB of bwdif: \(line)")

            // Identity on the progressive frames: at least as close to them as ffmpeg's gbrp round trip.
            let identity = scratch("identity-\(transfer).mkv")
            r = try gpuencode([progressive.path, identity.path, "--preset", "identity", "--crf", "0", "-y"], environment: environment)
            XCTAssertEqual(r.status, ExitCode.ok, r.summary)
            guard r.status == ExitCode.ok else { continue }
            let kept = planes(try RawFrames(identity, width: w, height: h), all)
            let identityLine = "\(transfer) identity Y/Cb/Cr/all \(f(kept)) dB; ffmpeg gbrp round trip \(f(roundTrip))"
            table.append(identityLine)
            for plane in 1...2 {
                XCTAssertGreaterThanOrEqual(kept[plane], min(roundTrip[plane], 60), "\(["Y", "Cb", "Cr"][plane]): \(identityLine)")
            }
            XCTAssertGreaterThanOrEqual(kept[3], min(roundTrip[3], 60), "all planes: \(identityLine)")
        }
        print(table.joined(separator: "\n"))
    }
}
