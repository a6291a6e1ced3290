import GPUEncodeCore
import GPUEncodeCPUKernels
import GPUEncodeFilters

/// The CPU executions (`RunOnCPU`): the frame renderer's block pass run by a CPU kernel, from the
/// source planes straight into the output planes (NV12 or three planes): `PlaneNativeKernel` for
/// the plane-native pass, `ReferenceBlockKernel` for the reference's. The kernel gets the same
/// matrices, clamp and chroma taps the shaders get (`FrameUniforms`, `ChromaDecimator`), and each
/// filter's map or tables at the frame's time, rebuilt only when a keyframed value moves.
final class HostPlanes {
    private enum Kernel {
        case planeNative(PlaneNativeKernel)
        case reference(ReferenceBlockKernel)
    }

    private let kernel: Kernel
    private let filters: [FilterInstance]
    private let animated: Bool
    private var opsTime: Double = 0
    private let width: Int
    private let height: Int

    init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], clampsSource: Bool, planeNative: Bool) {
        let toRGB = source.toRGB(), fromRGB = YUVColorSpace(matrix: .bt709, fullRange: false).fromRGB()
        let decimator = ChromaDecimator(for: g)
        self.filters = filters
        animated = filters.contains { $0.isAnimated }
        let description = PointChainDescription(toRGB: AffineMap3(rows: toRGB.rows, offset: toRGB.offset), clampsSource: clampsSource,
                                                ops: HostPlanes.ops(filters, at: 0),
                                                toYCbCr: AffineMap3(rows: fromRGB.rows, offset: fromRGB.offset),
                                                across: decimator.across.map(Float.init), down: decimator.down.map(Float.init))
        kernel = planeNative ? .planeNative(PlaneNativeKernel(description)) : .reference(ReferenceBlockKernel(description))
        (width, height) = (g.sourceWidth, g.sourceHeight)
    }

    /// Each filter as the kernels take it at `time` (RunOnCPU planned only filters that have a form).
    static func ops(_ filters: [FilterInstance], at time: Double) -> [ChainOp] {
        filters.map { f in
            if let a = f.affine(at: time) {
                let r = a.rows.map(Float.init)
                return .affine(AffineMap3(rows: [r[0], r[1], r[2], r[4], r[5], r[6], r[8], r[9], r[10]], offset: [r[3], r[7], r[11]]))
            }
            return .lookup(ChannelLookup(tables: f.channelTables!.tables.map { $0.map(Float.init) }))
        }
    }

    /// Filters `source` (Y, Cb, Cr) into `output` (Y and CbCr, or Y, Cb, Cr). One band: the
    /// encoder's threads keep every core busy, so a second band only adds the wake-ups (1080p
    /// sepia, 3 interleaved rounds: 4.16-4.30 s wall and 7.62-7.85 CPU s with one, 4.30-4.34 s
    /// and 7.56-7.71 with two).
    func render(_ source: [Plane], into output: [Plane], time: Double) {
        precondition(source.count == 3 && (output.count == 2 || output.count == 3))
        precondition(source[1].stride == source[2].stride, "Cb and Cr rows of one length")
        if animated && time != opsTime {
            let ops = HostPlanes.ops(filters, at: time)
            switch kernel {
            case .planeNative(let k): k.setOps(ops)
            case .reference(let k): k.setOps(ops)
            }
            opsTime = time
        }
        let input = PlanePointers(y: source[0].data, yStride: source[0].stride, cb: source[1].data, cr: source[2].data,
                                  chromaStride: source[1].stride)
        let nv12 = output.count == 2
        let out = PlanePointers(y: output[0].data, yStride: output[0].stride, cb: output[1].data,
                                cr: nv12 ? output[1].data + 1 : output[2].data, chromaStride: output[1].stride, chromaStep: nv12 ? 2 : 1)
        switch kernel {
        case .planeNative(let k): k.run(input, into: out, width: width, height: height)
        case .reference(let k): k.run(input, into: out, width: width, height: height)
        }
    }
}
