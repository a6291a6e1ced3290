import Foundation
import GPUEncodeCore
import GPUEncodeCPUKernels
import GPUEncodeFilters

/// The `cpuPlanes` execution (`RunOnCPU`): the frame renderer's plane-native pass run by
/// `AffinePlaneKernel` on the CPU, from the source planes straight into the output planes (NV12 or
/// three planes). The kernel gets the same matrices, clamp and chroma taps the shaders get
/// (`FrameUniforms`, `ChromaDecimator`), and each filter's map at the frame's time, rebuilt only
/// when a keyframed value moves.
final class HostPlanes {
    private let kernel: AffinePlaneKernel
    private let filters: [FilterInstance]
    private let animated: Bool
    private var mapsTime: Double = 0
    private let width: Int
    private let height: Int
    /// One band: the encoder's threads keep every core busy, so a second band only adds the
    /// wake-ups (1080p sepia, 3 interleaved rounds: 4.16-4.30 s wall and 7.62-7.85 CPU s with one,
    /// 4.30-4.34 s and 7.56-7.71 with two).
    private let bands = 1

    init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], clampsSource: Bool) {
        let toRGB = source.toRGB(), fromRGB = YUVColorSpace(matrix: .bt709, fullRange: false).fromRGB()
        let decimator = ChromaDecimator(for: g)
        self.filters = filters
        animated = filters.contains { $0.isAnimated }
        kernel = AffinePlaneKernel(toRGB: AffineMap3(rows: toRGB.rows, offset: toRGB.offset), clampsSource: clampsSource,
                                   filters: HostPlanes.maps(filters, at: 0), toYCbCr: AffineMap3(rows: fromRGB.rows, offset: fromRGB.offset),
                                   across: decimator.across.map(Float.init), down: decimator.down.map(Float.init))
        (width, height) = (g.sourceWidth, g.sourceHeight)
    }

    /// Each filter's map at `time` (RunOnCPU planned only filters that have one).
    static func maps(_ filters: [FilterInstance], at time: Double) -> [AffineMap3] {
        filters.map { f in
            let rows = f.affine(at: time)!.rows.map(Float.init)
            return AffineMap3(rows: [rows[0], rows[1], rows[2], rows[4], rows[5], rows[6], rows[8], rows[9], rows[10]],
                              offset: [rows[3], rows[7], rows[11]])
        }
    }

    /// Filters `source` (Y, Cb, Cr) into `output` (Y and CbCr, or Y, Cb, Cr).
    func render(_ source: [Plane], into output: [Plane], time: Double) {
        precondition(source.count == 3 && (output.count == 2 || output.count == 3))
        if animated && time != mapsTime {
            kernel.setFilters(HostPlanes.maps(filters, at: time))
            mapsTime = time
        }
        let input = PlanePointers(y: source[0].data, yStride: source[0].stride, cb: source[1].data, cr: source[2].data,
                                  chromaStride: source[1].stride)
        precondition(source[1].stride == source[2].stride, "Cb and Cr rows of one length")
        let nv12 = output.count == 2
        let out = PlanePointers(y: output[0].data, yStride: output[0].stride, cb: output[1].data,
                                cr: nv12 ? output[1].data + 1 : output[2].data, chromaStride: output[1].stride, chromaStep: nv12 ? 2 : 1)
        kernel.run(input, into: out, width: width, height: height, bands: bands)
    }
}
