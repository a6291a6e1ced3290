import Dispatch

/// A colour map x -> rows * x + offset on three channels (rows row-major), in single precision as
/// the shaders compute it.
public struct AffineMap3: Sendable, Equatable {
    public var rows: [Float]
    public var offset: [Float]

    public init(rows: [Float], offset: [Float]) {
        precondition(rows.count == 9 && offset.count == 3)
        self.rows = rows
        self.offset = offset
    }
}

/// One 8-bit 4:2:0 frame's planes, read (`source`) or written (`output`). `chromaStep` 2 with
/// `cr` = `cb` + 1 is NV12's interleaved chroma.
public struct PlanePointers {
    public var y: UnsafeMutablePointer<UInt8>
    public var yStride: Int
    public var cb: UnsafeMutablePointer<UInt8>
    public var cr: UnsafeMutablePointer<UInt8>
    public var chromaStride: Int
    public var chromaStep: Int

    public init(y: UnsafeMutablePointer<UInt8>, yStride: Int, cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>,
                chromaStride: Int, chromaStep: Int = 1) {
        (self.y, self.yStride, self.cb, self.cr, self.chromaStride, self.chromaStep) = (y, yStride, cb, cr, chromaStride, chromaStep)
    }
}

/// The renderer's plane-native block pass for chains of affine colour filters, on the CPU in
/// 8-lane vectors: the same arithmetic as the GLSL (`PlaneNativeShaders.packedBlockMain`), in the
/// same order, so it gives the same bytes up to single-precision rounding at code-value ties.
/// - Each luma pixel: Y' with the source's chroma upsampled linearly (left-sited across, centred
///   down: 3/4 of the nearer row and 1/4 of the farther), to R'G'B' (clamped to 0...1 unless the
///   chain is transparent), then each filter's map, clamped and rounded to 8 bits as the
///   reference's 8-bit intermediate pictures are, then the output matrix's luma row.
/// - Each chroma sample: the chain at the source's own Cb, Cr and the luma decimated by the
///   writer's kernels (`across`, five taps on columns 2k-2 .. 2k+2; `down`, four on rows 2m-1 ..
///   2m+2; edges repeated), then the output matrix's chroma rows.
///
/// Built for AVX2 and FMA (Package.swift): call it only where `CPUFeatures` says the machine has them.
public final class AffinePlaneKernel: @unchecked Sendable {
    typealias V = SIMD8<Float>

    /// The maps as splatted vectors (row-major, then offsets).
    struct Map {
        var m: (V, V, V, V, V, V, V, V, V)
        var o: (V, V, V)

        init(_ a: AffineMap3) {
            let r = a.rows.map { V(repeating: $0) }
            m = (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8])
            o = (V(repeating: a.offset[0]), V(repeating: a.offset[1]), V(repeating: a.offset[2]))
        }
    }

    private let toRGB: Map
    private let clampsSource: Bool
    private var filters: [Map]
    private let toYCbCr: Map
    private let acrossTaps: [V]
    private let down: [Float]

    /// `toRGB`: normalised Y'CbCr (code / 255) to R'G'B'; `toYCbCr`: back, to normalised codes.
    /// `across`, `down`: the chroma decimation's taps (five and four).
    public init(toRGB: AffineMap3, clampsSource: Bool, filters: [AffineMap3], toYCbCr: AffineMap3, across: [Float], down: [Float]) {
        precondition(across.count == 5 && down.count == 4)
        self.toRGB = Map(toRGB)
        self.clampsSource = clampsSource
        self.filters = filters.map(Map.init)
        self.toYCbCr = Map(toYCbCr)
        acrossTaps = across.map { V(repeating: $0) }
        self.down = down
    }

    /// Replaces the filters' maps (keyframed values at a new time).
    public func setFilters(_ maps: [AffineMap3]) {
        filters = maps.map(Map.init)
    }

    /// Filters `source` into `output`, both `width` x `height` (even), in `bands` horizontal bands
    /// run in parallel.
    public func run(_ source: PlanePointers, into output: PlanePointers, width: Int, height: Int, bands: Int = 1) {
        precondition(width % 2 == 0 && height % 2 == 0 && width >= 2 && height >= 2)
        let chromaRows = height / 2
        let n = max(1, min(bands, chromaRows))
        if n == 1 { return runBand(source, output, width, height, 0..<chromaRows) }
        DispatchQueue.concurrentPerform(iterations: n) { i in
            runBand(source, output, width, height, (chromaRows * i / n)..<(chromaRows * (i + 1) / n))
        }
    }

    private func runBand(_ s: PlanePointers, _ o: PlanePointers, _ w: Int, _ h: Int, _ rows: Range<Int>) {
        let cw = w / 2
        let padded = (w + 7) / 8 * 8 + 8
        // Scratch: chroma rows upsampled to luma width for two luma rows, the decimated luma of a
        // chroma row, and the horizontally filtered luma rows the decimation reads (by row, 6 kept).
        let scratch = UnsafeMutablePointer<Float>.allocate(capacity: padded * 15)
        scratch.initialize(repeating: 0, count: padded * 15)
        defer { scratch.deallocate() }
        let (u0, v0, u1, v1) = (scratch, scratch + padded, scratch + 2 * padded, scratch + 3 * padded)
        let (lumaDown, cbRow, crRow) = (scratch + 4 * padded, scratch + 5 * padded, scratch + 6 * padded)
        let evenOdd = scratch + 7 * padded
        let filtered = scratch + 9 * padded
        var filteredRow = [Int](repeating: -1, count: 6)
        func across(row: Int) -> UnsafeMutablePointer<Float> {
            let slot = row % 6
            let out = filtered + slot * padded
            if filteredRow[slot] != row {
                acrossRow(s.y + row * s.yStride, width: w, into: out, scratch: evenOdd)
                filteredRow[slot] = row
            }
            return out
        }
        let cMax = cw - 1
        for m in rows {
            let above = max(m - 1, 0), below = min(m + 1, h / 2 - 1)
            let ua = s.cb + above * s.chromaStride, ub = s.cb + m * s.chromaStride, uc = s.cb + below * s.chromaStride
            let va = s.cr + above * s.chromaStride, vb = s.cr + m * s.chromaStride, vc = s.cr + below * s.chromaStride
            let step = s.chromaStep
            // Row 2m sits at chroma row m - 1/4, row 2m+1 at m + 1/4; odd columns halfway between
            // chroma columns (left-sited).
            for row in 0..<2 {
                let (far, farV, uOut, vOut) = row == 0 ? (ua, va, u0, v0) : (uc, vc, u1, v1)
                var k = 0
                while k < cw {
                    let n = min(k + 1, cMax)
                    let uk = 0.75 * unit(ub[k * step]) + 0.25 * unit(far[k * step])
                    let un = 0.75 * unit(ub[n * step]) + 0.25 * unit(far[n * step])
                    let vk = 0.75 * unit(vb[k * step]) + 0.25 * unit(farV[k * step])
                    let vn = 0.75 * unit(vb[n * step]) + 0.25 * unit(farV[n * step])
                    uOut[2 * k] = uk
                    uOut[2 * k + 1] = 0.5 * (uk + un)
                    vOut[2 * k] = vk
                    vOut[2 * k + 1] = 0.5 * (vk + vn)
                    k += 1
                }
                lumaRow(s.y + (2 * m + row) * s.yStride, u: uOut, v: vOut, width: w, into: o.y + (2 * m + row) * o.yStride)
            }
            // The chroma samples: the luma decimated under the writer's taps, the source's own Cb, Cr.
            let rA = across(row: max(2 * m - 1, 0)), r0 = across(row: 2 * m), r1 = across(row: 2 * m + 1)
            let rB = across(row: min(2 * m + 2, h - 1))
            let (d0, d1, d2, d3) = (V(repeating: down[0]), V(repeating: down[1]), V(repeating: down[2]), V(repeating: down[3]))
            var k = 0
            while k < cw {
                let value = d0 * load(rA + k) + d1 * load(r0 + k) + d2 * load(r1 + k) + d3 * load(rB + k)
                store(value, lumaDown + k)
                k += 8
            }
            for k in 0..<cw {
                cbRow[k] = unit(ub[k * step])
                crRow[k] = unit(vb[k * step])
            }
            chromaRow(luma: lumaDown, cb: cbRow, cr: crRow, count: cw,
                      cbOut: o.cb + m * o.chromaStride, crOut: o.cr + m * o.chromaStride, step: o.chromaStep)
        }
    }

    /// A code value as the shaders read it from an 8-bit texture.
    @inline(__always) private func unit(_ code: UInt8) -> Float { Float(code) / 255 }

    @inline(__always) private func load(_ p: UnsafePointer<Float>) -> V { UnsafeRawPointer(p).loadUnaligned(as: V.self) }
    @inline(__always) private func store(_ v: V, _ p: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: V.self) }

    /// The five-tap sum across for every chroma column of one luma row (columns 2k-2 .. 2k+2,
    /// the picture's edge columns repeated), summed in the shader's order.
    private func acrossRow(_ y: UnsafePointer<UInt8>, width w: Int, into out: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>) {
        let cw = w / 2
        // even[k + 1] = column 2k, odd[k + 1] = column 2k+1; index 0 and cw + 1: the edges repeated.
        let even = scratch, odd = scratch + (w + 7) / 8 * 8 + 8
        for k in 0..<cw {
            even[k + 1] = unit(y[2 * k])
            odd[k + 1] = unit(y[2 * k + 1])
        }
        even[0] = even[1]
        odd[0] = even[1]
        even[cw + 1] = odd[cw]
        let h = acrossTaps
        var k = 0
        while k < cw {
            let sum = h[0] * load(even + k) + h[1] * load(odd + k) + h[2] * load(even + k + 1) + h[3] * load(odd + k + 1)
                + h[4] * load(even + k + 2)
            store(sum, out + k)
            k += 8
        }
    }

    private static let magic = V(repeating: 12_582_912) // 1.5 * 2^23: adding it rounds to an integer (to even)

    @inline(__always) private func clamp01(_ c: V) -> V {
        let zero = V(repeating: 0), one = V(repeating: 1)
        return c.replacing(with: zero, where: c .< zero).replacing(with: one, where: c .> one)
    }

    /// GLSL's `floor(clamp(c, 0.0, 1.0) * 255.0 + 0.5) / 255.0`.
    @inline(__always) private func round8(_ c: V) -> V {
        let s = clamp01(c) * 255 + 0.5
        let r = (s + AffinePlaneKernel.magic) - AffinePlaneKernel.magic
        return r.replacing(with: r - 1, where: r .> s) * (1 / 255 as Float)
    }

    /// The chain at eight pixels: normalised Y'CbCr to filtered R'G'B'.
    @inline(__always) private func chain(_ y: V, _ u: V, _ v: V, _ filters: [Map]) -> (V, V, V) {
        let t = toRGB
        var r = t.m.0 * y + t.m.1 * u + t.m.2 * v + t.o.0
        var g = t.m.3 * y + t.m.4 * u + t.m.5 * v + t.o.1
        var b = t.m.6 * y + t.m.7 * u + t.m.8 * v + t.o.2
        if clampsSource { (r, g, b) = (clamp01(r), clamp01(g), clamp01(b)) }
        for f in filters {
            (r, g, b) = (round8(f.m.0 * r + f.m.1 * g + f.m.2 * b + f.o.0),
                         round8(f.m.3 * r + f.m.4 * g + f.m.5 * b + f.o.1),
                         round8(f.m.6 * r + f.m.7 * g + f.m.8 * b + f.o.2))
        }
        return (r, g, b)
    }

    /// A normalised value as the 8-bit target stores it: clamped, rounded to the nearest code.
    @inline(__always) private func codes(_ c: V) -> SIMD8<UInt8> {
        let t = clamp01(c) * 255 + AffinePlaneKernel.magic
        return SIMD8<UInt8>(truncatingIfNeeded: unsafeBitCast(t, to: SIMD8<UInt32>.self))
    }

    private func lumaRow(_ y: UnsafePointer<UInt8>, u: UnsafePointer<Float>, v: UnsafePointer<Float>, width w: Int,
                         into out: UnsafeMutablePointer<UInt8>) {
        let c = toYCbCr
        let fs = filters
        var x = 0
        while x < w {
            let n = min(8, w - x)
            var bytes = SIMD8<UInt8>()
            if n == 8 { bytes = UnsafeRawPointer(y + x).loadUnaligned(as: SIMD8<UInt8>.self) } else { for i in 0..<n { bytes[i] = y[x + i] } }
            let yy = (unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: bytes) | 0x4B00_0000, to: V.self) - 8_388_608) / 255
            let (r, g, b) = chain(yy, load(u + x), load(v + x), fs)
            let luma = codes(c.m.0 * r + c.m.1 * g + c.m.2 * b + c.o.0)
            if n == 8 { UnsafeMutableRawPointer(out + x).storeBytes(of: luma, as: SIMD8<UInt8>.self) } else { for i in 0..<n { out[x + i] = luma[i] } }
            x += 8
        }
    }

    private func chromaRow(luma: UnsafePointer<Float>, cb: UnsafePointer<Float>, cr: UnsafePointer<Float>, count: Int,
                           cbOut: UnsafeMutablePointer<UInt8>, crOut: UnsafeMutablePointer<UInt8>, step: Int) {
        let c = toYCbCr
        let fs = filters
        var k = 0
        while k < count {
            let (r, g, b) = chain(load(luma + k), load(cb + k), load(cr + k), fs)
            let u = codes(c.m.3 * r + c.m.4 * g + c.m.5 * b + c.o.1)
            let v = codes(c.m.6 * r + c.m.7 * g + c.m.8 * b + c.o.2)
            for i in 0..<min(8, count - k) {
                cbOut[(k + i) * step] = u[i]
                crOut[(k + i) * step] = v[i]
            }
            k += 8
        }
    }
}
