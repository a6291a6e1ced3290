/// The renderer's reference block pass (`FrameRenderer.packedBlockMain`, the plan every optimized
/// one is held to) on the CPU in 8-lane vectors, for chains of affine maps and channel lookups:
/// the same arithmetic as the GLSL, in the same order.
/// - Each luma pixel: the chain (`PointChain`) at Y' and the linearly upsampled chroma, then the
///   output matrix's luma row; its R'G'B' is kept for chroma.
/// - Each chroma sample (row m, column k): the filtered R'G'B' of rows 2m and 2m+1 summed, then the
///   five taps across (columns 2k-2 .. 2k+2, edges repeated), weighted `down[1]`; plus rows 2m-1 and
///   2m+2 (clamped), weighted `down[0]` and `down[3]`, each the chain once at the five-tap luma of
///   that row and the chroma interpolated to that row at the sample's own column; then the output
///   matrix's chroma rows.
///
/// Built for AVX2 and FMA (Package.swift): call it only where `CPUFeatures` says the machine has them.
public final class ReferenceBlockKernel: @unchecked Sendable {
    private var chain: PointChain
    private let scratch = ScratchRows()

    public init(_ description: PointChainDescription) {
        precondition(description.down[1] == description.down[2], "the inner rows share one weight down")
        chain = PointChain(description)
    }

    /// Replaces the filters (keyframed values at a new time).
    public func setOps(_ ops: [ChainOp]) {
        chain.steps = ops.map(Step.init)
    }

    /// Filters `source` into `output`, both `width` x `height` (even).
    public func run(_ s: PlanePointers, into o: PlanePointers, width w: Int, height h: Int) {
        precondition(w % 2 == 0 && h % 2 == 0 && w >= 2 && h >= 2)
        let cw = w / 2
        let padded = (w + 7) / 8 * 8 + 8
        scratch.prepare(bands: 1, count: padded * 36)
        let base = scratch[0]
        func row(_ i: Int) -> UnsafeMutablePointer<Float> { base + i * padded }
        // Scratch: upsampled chroma for two luma rows (0-3), the two rows' R'G'B' (4-9), the
        // even/odd split (10-11), the inner sums across (12-14), the chroma rows read (15-20, by
        // row), the luma across (21-26, by row), the outer rows' chroma and their R'G'B' (27-35).
        let (u0, v0, u1, v1) = (row(0), row(1), row(2), row(3))
        let rgb0 = [row(4), row(5), row(6)], rgb1 = [row(7), row(8), row(9)]
        let evenOdd = row(10)
        let inner = [row(12), row(13), row(14)]
        let taps = chain.acrossTaps
        var chromaRowAt = [Int](repeating: -1, count: 3)
        func chroma(_ r: Int) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
            let slot = r % 3
            let (cb, cr) = (row(15 + slot), row(18 + slot))
            if chromaRowAt[slot] != r {
                unitRow(s.cb + r * s.chromaStride, step: s.chromaStep, count: cw, into: cb)
                unitRow(s.cr + r * s.chromaStride, step: s.chromaStep, count: cw, into: cr)
                chromaRowAt[slot] = r
            }
            return (cb, cr)
        }
        var acrossAt = [Int](repeating: -1, count: 6)
        func lumaAcross(_ r: Int) -> UnsafeMutablePointer<Float> {
            let slot = r % 6
            let out = row(21 + slot)
            if acrossAt[slot] != r {
                acrossRow(width: w, taps: taps, into: out, scratch: evenOdd) { splitCodes(s.y + r * s.yStride, width: w, even: $0, odd: $1) }
                acrossAt[slot] = r
            }
            return out
        }
        let (outerU, outerV) = (row(27), row(28))
        let top = [row(29), row(30), row(31)], bottom = [row(32), row(33), row(34)]
        let down = chain.down.map { V(repeating: $0) }
        for m in 0..<(h / 2) {
            let above = max(m - 1, 0), below = min(m + 1, h / 2 - 1)
            let (cbA, crA) = chroma(above), (cbB, crB) = chroma(m), (cbC, crC) = chroma(below)
            upsampleRow(near: cbB, far: cbA, count: cw, into: u0)
            upsampleRow(near: crB, far: crA, count: cw, into: v0)
            upsampleRow(near: cbB, far: cbC, count: cw, into: u1)
            upsampleRow(near: crB, far: crC, count: cw, into: v1)
            lumaRow(s.y + 2 * m * s.yStride, u: u0, v: v0, width: w, into: o.y + 2 * m * o.yStride, rgb: rgb0)
            lumaRow(s.y + (2 * m + 1) * s.yStride, u: u1, v: v1, width: w, into: o.y + (2 * m + 1) * o.yStride, rgb: rgb1)
            // The block's own rows: their R'G'B' summed, then across.
            for c in 0..<3 {
                let (a, b) = (rgb0[c], rgb1[c])
                acrossRow(width: w, taps: taps, into: inner[c], scratch: evenOdd) { even, odd in
                    for k in 0..<cw {
                        even[k] = a[2 * k] + b[2 * k]
                        odd[k] = a[2 * k + 1] + b[2 * k + 1]
                    }
                }
            }
            // The outer rows: the chain once per sample.
            for (r, out) in [(0, top), (3, bottom)] {
                let y = min(max(2 * m - 1 + r, 0), h - 1)
                let t = y - (2 * m - 1)
                let wa: Float = t == 0 ? 0.75 : t == 1 ? 0.25 : 0
                let wb: Float = t == 0 ? 0.25 : t == 1 ? 0.75 : t == 2 ? 0.75 : 0.25
                let wc: Float = t == 2 ? 0.25 : t == 3 ? 0.75 : 0
                let (va, vb, vc) = (V(repeating: wa), V(repeating: wb), V(repeating: wc))
                var k = 0
                while k < cw {
                    store(va * load(cbA + k) + vb * load(cbB + k) + vc * load(cbC + k), outerU + k)
                    store(va * load(crA + k) + vb * load(crB + k) + vc * load(crC + k), outerV + k)
                    k += 8
                }
                let luma = lumaAcross(y)
                let steps = chain.steps
                k = 0
                while k < cw {
                    let (rr, gg, bb) = chain.evaluate(load(luma + k), load(outerU + k), load(outerV + k), steps)
                    store(rr, out[0] + k)
                    store(gg, out[1] + k)
                    store(bb, out[2] + k)
                    k += 8
                }
            }
            // The samples.
            let cbOut = o.cb + m * o.chromaStride, crOut = o.cr + m * o.chromaStride
            var k = 0
            while k < cw {
                let r = down[0] * load(top[0] + k) + down[3] * load(bottom[0] + k) + down[1] * load(inner[0] + k)
                let g = down[0] * load(top[1] + k) + down[3] * load(bottom[1] + k) + down[1] * load(inner[1] + k)
                let b = down[0] * load(top[2] + k) + down[3] * load(bottom[2] + k) + down[1] * load(inner[2] + k)
                let (_, u, v) = chain.toYCbCr.apply(r, g, b)
                let (us, vs) = (codes(u), codes(v))
                for i in 0..<min(8, cw - k) {
                    cbOut[(k + i) * o.chromaStep] = us[i]
                    crOut[(k + i) * o.chromaStep] = vs[i]
                }
                k += 8
            }
        }
    }

    private func lumaRow(_ y: UnsafePointer<UInt8>, u: UnsafePointer<Float>, v: UnsafePointer<Float>, width w: Int,
                         into out: UnsafeMutablePointer<UInt8>, rgb: [UnsafeMutablePointer<Float>]) {
        let c = chain.toYCbCr
        let steps = chain.steps
        let (rp, gp, bp) = (rgb[0], rgb[1], rgb[2])
        var x = 0
        while x < w {
            let n = min(8, w - x)
            let (r, g, b) = chain.evaluate(units(loadBytes(y + x, n)), load(u + x), load(v + x), steps)
            store(r, rp + x)
            store(g, gp + x)
            store(b, bp + x)
            storeBytes(codes(c.o.0.addingProduct(c.m.0, r).addingProduct(c.m.1, g).addingProduct(c.m.2, b)), out + x, n)
            x += 8
        }
    }
}
