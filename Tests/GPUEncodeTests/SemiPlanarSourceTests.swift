import CFFmpeg
import Foundation
import GPUEncodeKit
import XCTest

/// The GL half of NVDEC's CUDA-GL interop, on any GPU (llvmpipe in CI): `SemiPlanarSource` must
/// leave the renderer's source planes as an upload of the planar frame would. Its two textures are
/// filled from system memory here (on NVIDIA the CUDA copy fills them; Tests/Device/nvdec-interop.sh
/// checks that half against software decoding). The oracle is ffmpeg's own conversion: one frame
/// of testsrc2 made by the ffmpeg CLI as NV12 (or P010) and as yuv420p (yuv420p10le); the
/// renderer's output from the semi-planar frame must equal, byte for byte, its output from the
/// planar one, with the planes packed four samples a texel (upright 4:2:0, a width that is not a
/// multiple of 4) and one a texel (rotated).
final class SemiPlanarSourceTests: GPUEncodeTestCase {
    private var context: GLContext?

    override func setUpWithError() throws {
        try super.setUpWithError()
        context = try GLContext(selection: .auto)
    }

    override func tearDown() {
        context = nil
        super.tearDown()
    }

    func testNV12GivesTheSameFrameAsPlanar() throws {
        try compare(planar: "yuv420p", semi: "nv12", format: AV_PIX_FMT_YUV420P, bytes: 1, rotation: .none)
        try compare(planar: "yuv420p", semi: "nv12", format: AV_PIX_FMT_YUV420P, bytes: 1, rotation: .clockwise90)
    }

    func testP010GivesTheSameFrameAsPlanar10Bit() throws {
        try compare(planar: "yuv420p10le", semi: "p010le", format: AV_PIX_FMT_YUV420P10LE, bytes: 2, rotation: .none)
        try compare(planar: "yuv420p10le", semi: "p010le", format: AV_PIX_FMT_YUV420P10LE, bytes: 2, rotation: .clockwise90)
    }

    /// 322x242: the packed planes' last texel holds two samples of the picture and two past it.
    private func compare(planar: String, semi: String, format: AVPixelFormat, bytes: Int, rotation: Rotation) throws {
        let (w, h) = (322, 242)
        // The semi-planar frame is the planar one repacked by ffmpeg (interleaved chroma; P010's
        // samples moved to the high bits), not a second conversion from RGB, which rounds differently.
        let planarFile = scratch("\(planar).raw"), semiFile = scratch("\(semi).raw")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(w)x\(h):rate=1",
                                         "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", planar, planarFile.path])
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", planar, "-s", "\(w)x\(h)",
                                         "-i", planarFile.path, "-f", "rawvideo", "-pix_fmt", semi, semiFile.path])
        var planarBytes = [UInt8](try Data(contentsOf: planarFile)), semiBytes = [UInt8](try Data(contentsOf: semiFile))
        let (cw, ch) = ((w + 1) / 2, (h + 1) / 2)
        XCTAssertEqual(planarBytes.count, (w * h + 2 * cw * ch) * bytes)
        XCTAssertEqual(semiBytes.count, planarBytes.count)
        let geometry = RenderGeometry(width: Int32(w), height: Int32(h), format: format, rotation: rotation)
        let color = YUVColorSpace(matrix: .bt709, fullRange: false)
        let nv12 = FrameRenderer.writesNV12(geometry, path: .direct, filters: [])
        let (ow, oh) = (geometry.outputWidth, geometry.outputHeight)

        func render(_ body: (FrameRenderer) throws -> [Plane]?) throws -> [UInt8] {
            // (Frames filled on the GPU need the renderer's own pass: no CPU kernel.)
            let renderer = try FrameRenderer(geometry: geometry, source: color, filters: [], transfer: TransferOptions(mode: .client),
                                             compile: CompileOptions(cpuKernels: false))
            let pipeline = RenderPipeline<Frame>(renderer: renderer, overlapReadback: false)
            let pool = try FramePool(width: Int32(ow), height: Int32(oh), format: nv12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_YUV420P)
            let out = try pool.frame()
            _ = try pipeline.process(source: try body(renderer), time: 0, into: out)
            // Y, then CbCr (NV12) or Cb and Cr: the picture's bytes of each row.
            let rows = nv12 ? [(ow, oh), (ow, oh / 2)] : [(ow, oh), (ow / 2, oh / 2), (ow / 2, oh / 2)]
            return zip(out.planes, rows).flatMap { plane, size in
                (0..<size.1).flatMap { y in Array(UnsafeBufferPointer(start: plane.data + y * plane.stride, count: size.0)) }
            }
        }
        let fromPlanar = try planarBytes.withUnsafeMutableBufferPointer { p in
            try render { _ in
                let base = p.baseAddress!
                return [Plane(data: base, stride: w * bytes), Plane(data: base + w * h * bytes, stride: cw * bytes),
                        Plane(data: base + (w * h + cw * ch) * bytes, stride: cw * bytes)]
            }
        }
        let fromSemiPlanar = try semiBytes.withUnsafeMutableBufferPointer { p in
            try render { renderer in
                let source = try SemiPlanarSource(renderer: renderer)
                let base = p.baseAddress!
                source.fill(luma: Plane(data: base, stride: w * bytes), chroma: Plane(data: base + w * h * bytes, stride: 2 * cw * bytes))
                try source.render()
                return nil
            }
        }
        XCTAssertEqual(fromPlanar.count, ow * oh * 3 / 2)
        XCTAssertEqual(fromSemiPlanar.count, fromPlanar.count)
        let differing = zip(fromPlanar, fromSemiPlanar).filter { $0 != $1 }.count
        XCTAssertEqual(differing, 0, "\(semi), rotation \(rotation): \(differing) output bytes differ from the planar frame's")
        // The comparison means something: the picture is not flat.
        XCTAssertGreaterThan(Set(fromPlanar).count, 100)
    }
}
