import Foundation
import GPUEncodeCPUKernels
import XCTest

/// The CPU kernels' ways of writing one frame give the same bytes: a block kernel split into bands
/// of chroma rows (one thread each in the renderer) against one pass over the frame, and every
/// kernel's NV12 output (Cb and Cr interleaved, what the encoders take) against its three planes.
/// Fusing a chain's per-channel steps into one table changes no byte either.
/// Sizes whose rows and chroma rows are no multiple of the kernels' eight lanes (and, for the blur,
/// of its 32 columns a step) take their tails. What the kernels compute is tested against the
/// renderer and independent oracles through the CLI (CPUPlanTests, FastBlurTests).
final class CPUKernelBandTests: XCTestCase {
    /// A frame's planes with their storage.
    struct Frame {
        var y: [UInt8], cb: [UInt8], cr: [UInt8], nv12: [UInt8]
        let width: Int, height: Int

        init(width: Int, height: Int, seed: UInt64) {
            (self.width, self.height) = (width, height)
            var state = seed
            func next() -> UInt8 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 56)
            }
            // Smooth gradients with noise on top: edges and flat runs both.
            y = (0..<(width * height)).map { i in UInt8(truncatingIfNeeded: (i % width) * 255 / width / 2 + Int(next() % 64) + 16) }
            cb = (0..<(width * height / 4)).map { _ in next() }
            cr = (0..<(width * height / 4)).map { i in UInt8(truncatingIfNeeded: i * 3) }
            nv12 = [UInt8](repeating: 0, count: width * height / 2)
        }

        /// The planes as a source or a planar output (`nv12`: Y and the interleaved chroma).
        mutating func pointers(nv12 interleaved: Bool, _ body: (PlanePointers) -> Void) {
            let (w, cw) = (width, width / 2)
            y.withUnsafeMutableBufferPointer { y in
                cb.withUnsafeMutableBufferPointer { cb in
                    cr.withUnsafeMutableBufferPointer { cr in
                        nv12.withUnsafeMutableBufferPointer { nv in
                            body(interleaved
                                 ? PlanePointers(y: y.baseAddress!, yStride: w, cb: nv.baseAddress!, cr: nv.baseAddress! + 1, chromaStride: w, chromaStep: 2)
                                 : PlanePointers(y: y.baseAddress!, yStride: w, cb: cb.baseAddress!, cr: cr.baseAddress!, chromaStride: cw))
                        }
                    }
                }
            }
        }

        /// The chroma as NV12 interleaves it.
        var interleaved: [UInt8] { zip(cb, cr).flatMap { [$0, $1] } }
    }

    private func description() -> PointChainDescription {
        // BT.709 limited range, normalised codes in and out (to three decimals: what is compared
        // here is one kernel with itself).
        let (o16, o128): (Float, Float) = (16 / 255, 128 / 255)
        let toRGB = AffineMap3(rows: [1.164, 0, 1.793, 1.164, -0.213, -0.533, 1.164, 2.112, 0],
                               offset: [-1.164 * o16 - 1.793 * o128, -1.164 * o16 + 0.746 * o128, -1.164 * o16 - 2.112 * o128])
        let fromRGB = AffineMap3(rows: [0.183, 0.614, 0.062, -0.101, -0.339, 0.439, 0.439, -0.399, -0.040], offset: [o16, o128, o128])
        let sepia = AffineMap3(rows: [0.3588, 0.7044, 0.1368, 0.2990, 0.5870, 0.1140, 0.2392, 0.4696, 0.0912], offset: [0, 0, 0])
        let curve = (0..<256).map { i in Float(pow(Double(i) / 255, 0.8)) }
        return PointChainDescription(toRGB: toRGB, clampsSource: true,
                                     ops: [.affine(sepia), .lookup(ChannelLookup(tables: [curve, curve, curve]))],
                                     toYCbCr: fromRGB,
                                     across: [-0.0625, 0.25, 0.625, 0.25, -0.0625], down: [0.125, 0.375, 0.375, 0.125])
    }

    /// `run` (a kernel's frame, `rows` of its chroma rows or all) into a fresh output of `source`'s size.
    private func output(_ source: Frame, nv12: Bool, _ run: (PlanePointers, PlanePointers) -> Void) -> Frame {
        var source = source
        var out = Frame(width: source.width, height: source.height, seed: 0)
        source.pointers(nv12: false) { s in out.pointers(nv12: nv12) { o in run(s, o) } }
        return out
    }

    func testBandsWriteTheSameBytesAsOnePass() {
        for (w, h) in [(202, 118), (64, 6), (30, 2)] {
            let source = Frame(width: w, height: h, seed: UInt64(w * h))
            let rows = h / 2, cut = rows / 3
            for planeNative in [true, false] {
                for nv12 in [false, true] {
                    func kernel() -> (PlanePointers, PlanePointers, Range<Int>?) -> Void {
                        if planeNative {
                            let k = PlaneNativeKernel(description())
                            return { k.run($0, into: $1, width: w, height: h, rows: $2) }
                        }
                        let k = ReferenceBlockKernel(description())
                        return { k.run($0, into: $1, width: w, height: h, rows: $2) }
                    }
                    let whole = kernel()
                    let one = output(source, nv12: nv12) { whole($0, $1, nil) }
                    let (first, second) = (kernel(), kernel())
                    let banded = output(source, nv12: nv12) { s, o in
                        second(s, o, cut..<rows)
                        first(s, o, 0..<cut)
                    }
                    let name = "\(w)x\(h) \(planeNative ? "plane-native" : "reference") \(nv12 ? "NV12" : "planar")"
                    XCTAssertGreaterThan(Set(one.y).count, min(10, w * h / 4), "\(name): a picture, not a constant")
                    XCTAssertEqual(one.y, banded.y, name)
                    XCTAssertEqual(nv12 ? one.nv12 : one.interleaved, nv12 ? banded.nv12 : banded.interleaved, name)
                }
                // NV12 against planar, one pass each.
                let k: PointChainKernelRunner = planeNative ? .planeNative(PlaneNativeKernel(description())) : .reference(ReferenceBlockKernel(description()))
                let planar = output(source, nv12: false) { k.run($0, $1, w, h) }
                let nv12 = output(source, nv12: true) { k.run($0, $1, w, h) }
                XCTAssertEqual(planar.y, nv12.y, "\(w)x\(h)")
                XCTAssertEqual(planar.interleaved, nv12.nv12, "\(w)x\(h)")
            }
        }
    }

    /// Per-channel runs fused into one table (`ChainOp.fusingPerChannelRuns`: a screen-like map
    /// and a curve after a map across channels, as 1977's) give the kernels' bytes unfused; what
    /// is not such a run is left as it is.
    func testFusedPerChannelRunsGiveTheSameBytes() {
        let (w, h) = (202, 118)
        let source = Frame(width: w, height: h, seed: 11)
        let across = AffineMap3(rows: [0.9, 0.05, 0.05, 0.1, 0.8, 0.1, 0.2, 0.1, 0.7], offset: [0.01, 0, -0.02])
        let screen = AffineMap3(rows: [0.93, 0, 0, 0, 0.97, 0, 0, 0, 0.95], offset: [0.07, 0.03, 0.05])
        let curve = (0..<256).map { i in Float(0.5 - 0.5 * cos(Double(i) / 255 * .pi)) }
        let ops: [ChainOp] = [.affine(across), .affine(screen), .lookup(ChannelLookup(tables: [curve, curve.reversed(), curve])), .affine(screen)]
        let fused = ChainOp.fusingPerChannelRuns(ops)
        XCTAssertEqual(fused.count, 2, "the map across, then one table")
        XCTAssertEqual(fused.first, ops.first)
        XCTAssertEqual(ChainOp.fusingPerChannelRuns([.affine(across), .affine(screen), .affine(screen)]).count, 3, "no table: the maps stay")
        XCTAssertEqual(ChainOp.fusingPerChannelRuns([.affine(screen), .lookup(ChannelLookup(tables: [curve, curve, curve]))]).count, 2,
                       "the first step reads the source, not codes")
        var d = description()
        for planeNative in [true, false] {
            let run = { (ops: [ChainOp]) -> Frame in
                d.ops = ops
                let k: PointChainKernelRunner = planeNative ? .planeNative(PlaneNativeKernel(d)) : .reference(ReferenceBlockKernel(d))
                return self.output(source, nv12: true) { k.run($0, $1, w, h) }
            }
            let (plain, joined) = (run(ops), run(fused))
            XCTAssertGreaterThan(Set(plain.y).count, 10)
            XCTAssertEqual(plain.y, joined.y, planeNative ? "plane-native" : "reference")
            XCTAssertEqual(plain.nv12, joined.nv12, planeNative ? "plane-native" : "reference")
        }
    }

    /// The blur kernel: NV12 and planar outputs agree, at widths with tails (648: 20 steps of 32
    /// columns and 8 more, chroma 324) and a flat picture stays flat (the taps sum to 1).
    func testGridBlurOutputsAgreeAndKeepAFlatPicture() {
        let weights = { (sigma: Double, radius: Int) -> [Float] in
            let w = (0...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
            let total = w[0] + 2 * w[1...].reduce(0, +)
            return w.map { Float($0 / total) }
        }
        for (w, h) in [(648, 30), (1920, 8), (8, 2)] {
            let kernel = GridBlurKernel(luma: weights(8, 24), chroma: weights(4, 12))
            let source = Frame(width: w, height: h, seed: 7)
            let planar = output(source, nv12: false) { kernel.run($0, into: $1, width: w, height: h) }
            let nv12 = output(source, nv12: true) { kernel.run($0, into: $1, width: w, height: h) }
            XCTAssertEqual(planar.y, nv12.y, "\(w)x\(h)")
            XCTAssertEqual(planar.interleaved, nv12.nv12, "\(w)x\(h)")
            var flat = Frame(width: w, height: h, seed: 1)
            (flat.y, flat.cb, flat.cr) = ([UInt8](repeating: 81, count: w * h), [UInt8](repeating: 90, count: w * h / 4), [UInt8](repeating: 240, count: w * h / 4))
            let blurred = output(flat, nv12: false) { kernel.run($0, into: $1, width: w, height: h) }
            XCTAssertEqual(Set(blurred.y), [81], "\(w)x\(h)")
            XCTAssertEqual(Set(blurred.cb), [90], "\(w)x\(h)")
            XCTAssertEqual(Set(blurred.cr), [240], "\(w)x\(h)")
        }
    }
}

/// One pass of either block kernel.
private enum PointChainKernelRunner {
    case planeNative(PlaneNativeKernel)
    case reference(ReferenceBlockKernel)

    func run(_ s: PlanePointers, _ o: PlanePointers, _ w: Int, _ h: Int) {
        switch self {
        case .planeNative(let k): k.run(s, into: o, width: w, height: h)
        case .reference(let k): k.run(s, into: o, width: w, height: h)
        }
    }
}
