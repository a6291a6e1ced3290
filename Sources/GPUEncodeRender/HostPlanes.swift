import Dispatch
import GPUEncodeCore
import GPUEncodeCPUKernels
import GPUEncodeFilters

/// The CPU executions (`RunOnCPU`): the frame renderer's block pass or plane blur run by a CPU
/// kernel, from the source planes straight into the output planes (NV12 or three planes):
/// `PlaneNativeKernel` for the plane-native pass, `ReferenceBlockKernel` for the reference's,
/// `GridBlurKernel` for the plane blur. A block kernel gets the same matrices, clamp and chroma taps
/// the shaders get (`FrameUniforms`, `ChromaDecimator`), and each filter's map or tables at the
/// frame's time, rebuilt only when a keyframed value moves; the blur gets the plane blur's taps.
final class HostPlanes {
    private enum Kernel {
        case planeNative(PlaneNativeKernel)
        case reference(ReferenceBlockKernel)
        case gridBlur(GridBlurKernel)
    }

    /// One kernel per band of rows (a block kernel's scratch is its own), run side by side.
    private let kernels: [Kernel]
    private let filters: [FilterInstance]
    private let animated: Bool
    private var opsTime: Double = 0
    private let width: Int
    private let height: Int

    /// `bands`: how many threads share a block kernel's rows (the blur runs in one).
    init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], clampsSource: Bool, execution: RenderExecution,
         bands: Int = 1) {
        (width, height) = (g.sourceWidth, g.sourceHeight)
        if case .cpuPlaneBlur(let sigma, let radius) = execution {
            // The plane blur's own kernels; a blur's sigma cannot be keyframed (presets refuse it).
            (self.filters, animated) = ([], false)
            let (luma, chroma) = PlaneBlur.kernels(sigma: sigma, radius: radius)
            kernels = [.gridBlur(GridBlurKernel(luma: luma.half.map(Float.init), chroma: chroma.half.map(Float.init)))]
            return
        }
        let toRGB = source.toRGB(), fromRGB = YUVColorSpace(matrix: .bt709, fullRange: false).fromRGB()
        let decimator = ChromaDecimator(for: g)
        self.filters = filters
        animated = filters.contains { $0.isAnimated }
        let description = PointChainDescription(toRGB: AffineMap3(rows: toRGB.rows, offset: toRGB.offset), clampsSource: clampsSource,
                                                ops: HostPlanes.ops(filters, at: 0),
                                                toYCbCr: AffineMap3(rows: fromRGB.rows, offset: fromRGB.offset),
                                                across: decimator.across.map(Float.init), down: decimator.down.map(Float.init))
        kernels = (0..<max(1, min(bands, g.sourceHeight / 2))).map { _ in
            execution == .cpuPlanes ? .planeNative(PlaneNativeKernel(description)) : .reference(ReferenceBlockKernel(description))
        }
    }

    /// Each filter as the kernels take it at `time` (RunOnCPU planned only filters that have a form).
    /// (Per-channel runs made one table: `ChainOp.fusingPerChannelRuns`, the same bytes.)
    static func ops(_ filters: [FilterInstance], at time: Double) -> [ChainOp] {
        ChainOp.fusingPerChannelRuns(filters.map { f in
            if let a = f.affine(at: time) {
                let r = a.rows.map(Float.init)
                return .affine(AffineMap3(rows: [r[0], r[1], r[2], r[4], r[5], r[6], r[8], r[9], r[10]], offset: [r[3], r[7], r[11]]))
            }
            return .lookup(ChannelLookup(tables: f.channelTables!.tables.map { $0.map(Float.init) }))
        })
    }

    /// Filters `source` (Y, Cb, Cr) into `output` (Y and CbCr, or Y, Cb, Cr), the bands side by
    /// side (`CPUFeatures.kernelBands`).
    func render(_ source: [Plane], into output: [Plane], time: Double) {
        precondition(source.count == 3 && (output.count == 2 || output.count == 3))
        precondition(source[1].stride == source[2].stride, "Cb and Cr rows of one length")
        if animated && time != opsTime {
            let ops = HostPlanes.ops(filters, at: time)
            for kernel in kernels {
                switch kernel {
                case .planeNative(let k): k.setOps(ops)
                case .reference(let k): k.setOps(ops)
                case .gridBlur: break
                }
            }
            opsTime = time
        }
        let input = PlanePointers(y: source[0].data, yStride: source[0].stride, cb: source[1].data, cr: source[2].data,
                                  chromaStride: source[1].stride)
        let nv12 = output.count == 2
        let out = PlanePointers(y: output[0].data, yStride: output[0].stride, cb: output[1].data,
                                cr: nv12 ? output[1].data + 1 : output[2].data, chromaStride: output[1].stride, chromaStep: nv12 ? 2 : 1)
        let (w, h, count) = (width, height, kernels.count)
        let run = { [kernels] (band: Int) in
            // Whole chroma rows, in order: band i takes rows i * n / count ..< (i + 1) * n / count.
            let rows = (band * (h / 2) / count)..<((band + 1) * (h / 2) / count)
            switch kernels[band] {
            case .planeNative(let k): k.run(input, into: out, width: w, height: h, rows: rows)
            case .reference(let k): k.run(input, into: out, width: w, height: h, rows: rows)
            case .gridBlur(let k): k.run(input, into: out, width: w, height: h)
            }
        }
        if count == 1 { run(0) } else { DispatchQueue.concurrentPerform(iterations: count, execute: run) }
    }
}
