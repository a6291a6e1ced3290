import Dispatch

/// The renderer's plane-native block pass (`PlaneNativeShaders.packedBlockMain`) on the CPU in
/// 8-lane vectors: the same arithmetic as the GLSL, in the same order, so it gives the same bytes
/// up to single-precision rounding at code-value ties.
/// - Each luma pixel: Y' with the source's chroma upsampled linearly (left-sited across, centred
///   down: 3/4 of the nearer row and 1/4 of the farther), the chain (`PointChain`), then the output
///   matrix's luma row.
/// - Each chroma sample: the chain at the source's own Cb, Cr and the luma decimated by the
///   writer's kernels (`across`, five taps on columns 2k-2 .. 2k+2; `down`, four on rows 2m-1 ..
///   2m+2; edges repeated), then the output matrix's chroma rows.
///
/// Built for AVX2 and FMA (Package.swift): call it only where `CPUFeatures` says the machine has them.
public final class PlaneNativeKernel: @unchecked Sendable {
    private var chain: PointChain
    private let scratch = ScratchRows()

    public init(_ description: PointChainDescription) {
        chain = PointChain(description)
    }

    /// Replaces the filters (keyframed values at a new time).
    public func setOps(_ ops: [ChainOp]) {
        chain.steps = ops.map(Step.init)
    }

    /// Filters `source` into `output`, both `width` x `height` (even), in `bands` horizontal bands
    /// run in parallel.
    public func run(_ source: PlanePointers, into output: PlanePointers, width: Int, height: Int, bands: Int = 1) {
        precondition(width % 2 == 0 && height % 2 == 0 && width >= 2 && height >= 2)
        let chromaRows = height / 2
        let n = max(1, min(bands, chromaRows))
        scratch.prepare(bands: n, count: ((width + 7) / 8 * 8 + 8) * 21)
        if n == 1 { return runBand(source, output, width, height, 0..<chromaRows, band: 0) }
        DispatchQueue.concurrentPerform(iterations: n) { i in
            runBand(source, output, width, height, (chromaRows * i / n)..<(chromaRows * (i + 1) / n), band: i)
        }
    }

    private func runBand(_ s: PlanePointers, _ o: PlanePointers, _ w: Int, _ h: Int, _ rows: Range<Int>, band: Int) {
        let cw = w / 2
        let padded = (w + 7) / 8 * 8 + 8
        // Scratch: chroma rows upsampled to luma width for two luma rows, the decimated luma of a
        // chroma row, the horizontally filtered luma rows the decimation reads (by row, 6 kept),
        // and the chroma rows read (by row, 3 kept).
        let scratch = self.scratch[band]
        let (u0, v0, u1, v1) = (scratch, scratch + padded, scratch + 2 * padded, scratch + 3 * padded)
        let lumaDown = scratch + 4 * padded
        let evenOdd = scratch + 7 * padded
        let filtered = scratch + 9 * padded
        let taps = chain.acrossTaps
        var filteredRow = [Int](repeating: -1, count: 6)
        func across(row: Int) -> UnsafeMutablePointer<Float> {
            let slot = row % 6
            let out = filtered + slot * padded
            if filteredRow[slot] != row {
                acrossRow(width: w, taps: taps, into: out, scratch: evenOdd) { splitCodes(s.y + row * s.yStride, width: w, even: $0, odd: $1) }
                filteredRow[slot] = row
            }
            return out
        }
        var chromaRowAt = [Int](repeating: -1, count: 3)
        func chroma(_ row: Int) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
            let slot = row % 3
            let (cb, cr) = (scratch + (15 + slot) * padded, scratch + (18 + slot) * padded)
            if chromaRowAt[slot] != row {
                unitRow(s.cb + row * s.chromaStride, step: s.chromaStep, count: cw, into: cb)
                unitRow(s.cr + row * s.chromaStride, step: s.chromaStep, count: cw, into: cr)
                chromaRowAt[slot] = row
            }
            return (cb, cr)
        }
        let down = chain.down.map { V(repeating: $0) }
        for m in rows {
            let above = max(m - 1, 0), below = min(m + 1, h / 2 - 1)
            let (cbA, crA) = chroma(above), (cbB, crB) = chroma(m), (cbC, crC) = chroma(below)
            // Row 2m sits at chroma row m - 1/4, row 2m+1 at m + 1/4.
            upsampleRow(near: cbB, far: cbA, count: cw, into: u0)
            upsampleRow(near: crB, far: crA, count: cw, into: v0)
            upsampleRow(near: cbB, far: cbC, count: cw, into: u1)
            upsampleRow(near: crB, far: crC, count: cw, into: v1)
            lumaRow(s.y + 2 * m * s.yStride, u: u0, v: v0, width: w, into: o.y + 2 * m * o.yStride)
            lumaRow(s.y + (2 * m + 1) * s.yStride, u: u1, v: v1, width: w, into: o.y + (2 * m + 1) * o.yStride)
            // The chroma samples: the luma decimated under the writer's taps, the source's own Cb, Cr.
            let rA = across(row: max(2 * m - 1, 0)), r0 = across(row: 2 * m), r1 = across(row: 2 * m + 1)
            let rB = across(row: min(2 * m + 2, h - 1))
            var k = 0
            while k < cw {
                store(down[0] * load(rA + k) + down[1] * load(r0 + k) + down[2] * load(r1 + k) + down[3] * load(rB + k), lumaDown + k)
                k += 8
            }
            chromaRow(luma: lumaDown, cb: cbB, cr: crB, count: cw, cbOut: o.cb + m * o.chromaStride, crOut: o.cr + m * o.chromaStride,
                      step: o.chromaStep)
        }
    }

    private func lumaRow(_ y: UnsafePointer<UInt8>, u: UnsafePointer<Float>, v: UnsafePointer<Float>, width w: Int,
                         into out: UnsafeMutablePointer<UInt8>) {
        let c = chain.toYCbCr
        let steps = chain.steps
        var x = 0
        while x < w {
            let n = min(8, w - x)
            let (r, g, b) = chain.evaluate(units(loadBytes(y + x, n)), load(u + x), load(v + x), steps)
            storeBytes(codes(c.o.0.addingProduct(c.m.0, r).addingProduct(c.m.1, g).addingProduct(c.m.2, b)), out + x, n)
            x += 8
        }
    }

    private func chromaRow(luma: UnsafePointer<Float>, cb: UnsafePointer<Float>, cr: UnsafePointer<Float>, count: Int,
                           cbOut: UnsafeMutablePointer<UInt8>, crOut: UnsafeMutablePointer<UInt8>, step: Int) {
        let steps = chain.steps
        var k = 0
        while k < count {
            let (r, g, b) = chain.evaluate(load(luma + k), load(cb + k), load(cr + k), steps)
            let (_, u, v) = chain.toYCbCr.apply(r, g, b)
            let (us, vs) = (codes(u), codes(v))
            for i in 0..<min(8, count - k) {
                cbOut[(k + i) * step] = us[i]
                crOut[(k + i) * step] = vs[i]
            }
            k += 8
        }
    }
}
