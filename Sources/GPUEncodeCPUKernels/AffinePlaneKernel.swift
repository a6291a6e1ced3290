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

        /// The map at eight pixels, as fused multiply-adds (the shaders' products and sums differ
        /// from these by a rounding, which moves a code value only at a tie).
        @inline(__always) func apply(_ x: V, _ y: V, _ z: V) -> (V, V, V) {
            (o.0.addingProduct(m.0, x).addingProduct(m.1, y).addingProduct(m.2, z),
             o.1.addingProduct(m.3, x).addingProduct(m.4, y).addingProduct(m.5, z),
             o.2.addingProduct(m.6, x).addingProduct(m.7, y).addingProduct(m.8, z))
        }

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
        prepareScratch(bands: n, count: ((width + 7) / 8 * 8 + 8) * 21)
        if n == 1 { return runBand(source, output, width, height, 0..<chromaRows, band: 0) }
        DispatchQueue.concurrentPerform(iterations: n) { i in
            runBand(source, output, width, height, (chromaRows * i / n)..<(chromaRows * (i + 1) / n), band: i)
        }
    }

    /// Each band's scratch rows, kept from frame to frame (a fresh allocation of this size is a
    /// fresh mapping, which the kernel zeroes page by page on every frame).
    private var scratch: [UnsafeMutablePointer<Float>] = []
    private var scratchCount = 0

    private func prepareScratch(bands: Int, count: Int) {
        guard bands != scratch.count || count != scratchCount else { return }
        for p in scratch { p.deallocate() }
        scratch = (0..<bands).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        scratchCount = count
    }

    private func scratchFor(band: Int, count: Int) -> UnsafeMutablePointer<Float> {
        precondition(count == scratchCount)
        return scratch[band]
    }

    deinit {
        for p in scratch { p.deallocate() }
    }

    private func runBand(_ s: PlanePointers, _ o: PlanePointers, _ w: Int, _ h: Int, _ rows: Range<Int>, band: Int) {
        let cw = w / 2
        let padded = (w + 7) / 8 * 8 + 8
        // Scratch: chroma rows upsampled to luma width for two luma rows, the decimated luma of a
        // chroma row, and the horizontally filtered luma rows the decimation reads (by row, 6 kept).
        let scratch = scratchFor(band: band, count: padded * 21)
        let (u0, v0, u1, v1) = (scratch, scratch + padded, scratch + 2 * padded, scratch + 3 * padded)
        let lumaDown = scratch + 4 * padded
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
        // The chroma rows as the shaders read them (code / 255), the last column repeated past the
        // end, by row (3 kept: a chroma row serves the rows above, at and below it).
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
        for m in rows {
            let above = max(m - 1, 0), below = min(m + 1, h / 2 - 1)
            let (cbA, crA) = chroma(above), (cbB, crB) = chroma(m), (cbC, crC) = chroma(below)
            // Row 2m sits at chroma row m - 1/4, row 2m+1 at m + 1/4 (3/4 of the nearer row, 1/4
            // of the farther); odd columns halfway between chroma columns (left-sited).
            upsampleRow(near: cbB, far: cbA, count: cw, into: u0)
            upsampleRow(near: crB, far: crA, count: cw, into: v0)
            upsampleRow(near: cbB, far: cbC, count: cw, into: u1)
            upsampleRow(near: crB, far: crC, count: cw, into: v1)
            lumaRow(s.y + 2 * m * s.yStride, u: u0, v: v0, width: w, into: o.y + 2 * m * o.yStride)
            lumaRow(s.y + (2 * m + 1) * s.yStride, u: u1, v: v1, width: w, into: o.y + (2 * m + 1) * o.yStride)
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
            chromaRow(luma: lumaDown, cb: cbB, cr: crB, count: cw,
                      cbOut: o.cb + m * o.chromaStride, crOut: o.cr + m * o.chromaStride, step: o.chromaStep)
        }
    }

    /// `count` code values `step` bytes apart as the shaders read them (code / 255), then the last
    /// one repeated over the next eight.
    private func unitRow(_ codes: UnsafePointer<UInt8>, step: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
        var k = 0
        if step == 1 {
            while k + 8 <= count {
                store(units(UnsafeRawPointer(codes + k).loadUnaligned(as: SIMD8<UInt8>.self)), out + k)
                k += 8
            }
        }
        while k < count {
            out[k] = unit(codes[k * step])
            k += 1
        }
        for i in 0..<8 { out[count + i] = out[count - 1] }
    }

    /// Luma-width chroma for one luma row: `near` * 3/4 + `far` * 1/4 at even columns, the mean of
    /// two neighbours at odd ones (the next past the end repeated, as `unitRow` padded it).
    private func upsampleRow(near: UnsafePointer<Float>, far: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>) {
        let (a, b) = (V(repeating: 0.75), V(repeating: 0.25))
        var k = 0
        while k < count {
            let here = a * load(near + k) + b * load(far + k)
            let next = a * load(near + k + 1) + b * load(far + k + 1)
            let odd = 0.5 * (here + next)
            store(V(here[0], odd[0], here[1], odd[1], here[2], odd[2], here[3], odd[3]), out + 2 * k)
            store(V(here[4], odd[4], here[5], odd[5], here[6], odd[6], here[7], odd[7]), out + 2 * k + 8)
            k += 8
        }
    }

    /// Eight code values as normalised floats.
    @inline(__always) private func units(_ codes: SIMD8<UInt8>) -> V {
        (unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: codes) | 0x4B00_0000, to: V.self) - 8_388_608) / 255
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
        var k = 0
        while k + 8 <= cw {
            let pairs = UnsafeRawPointer(y + 2 * k).loadUnaligned(as: SIMD16<UInt8>.self)
            store(units(pairs.evenHalf), even + k + 1)
            store(units(pairs.oddHalf), odd + k + 1)
            k += 8
        }
        while k < cw {
            even[k + 1] = unit(y[2 * k])
            odd[k + 1] = unit(y[2 * k + 1])
            k += 1
        }
        even[0] = even[1]
        odd[0] = even[1]
        even[cw + 1] = odd[cw]
        let h = acrossTaps
        k = 0
        while k < cw {
            let sum = h[0] * load(even + k) + h[1] * load(odd + k) + h[2] * load(even + k + 1) + h[3] * load(odd + k + 1)
                + h[4] * load(even + k + 2)
            store(sum, out + k)
            k += 8
        }
    }

    /// The chain at eight pixels: normalised Y'CbCr to filtered R'G'B'.
    @inline(__always) private func chain(_ y: V, _ u: V, _ v: V, _ filters: [Map]) -> (V, V, V) {
        let t = toRGB
        var (r, g, b) = t.apply(y, u, v)
        if clampsSource { (r, g, b) = (clamp01(r), clamp01(g), clamp01(b)) }
        for f in filters {
            (r, g, b) = f.apply(r, g, b)
            (r, g, b) = (round8(r), round8(g), round8(b))
        }
        return (r, g, b)
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
            let yy = units(bytes)
            let (r, g, b) = chain(yy, load(u + x), load(v + x), fs)
            let luma = codes(c.o.0.addingProduct(c.m.0, r).addingProduct(c.m.1, g).addingProduct(c.m.2, b))
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
            let (_, cb, cr) = c.apply(r, g, b)
            let (u, v) = (codes(cb), codes(cr))
            for i in 0..<min(8, count - k) {
                cbOut[(k + i) * step] = u[i]
                crOut[(k + i) * step] = v[i]
            }
            k += 8
        }
    }
}

// Free functions, so that they inline into the vector loops.

/// 1.5 * 2^23: adding it to a float in 0 ... 2^22 rounds it to an integer (to even).
private let magicNumber: Float = 12_582_912

@_transparent private func clamp01(_ c: SIMD8<Float>) -> SIMD8<Float> {
    let zero = SIMD8<Float>(repeating: 0), one = SIMD8<Float>(repeating: 1)
    return c.replacing(with: zero, where: c .< zero).replacing(with: one, where: c .> one)
}

/// GLSL's `floor(clamp(c, 0.0, 1.0) * 255.0 + 0.5) / 255.0`. The floor is exact: halves are
/// common here (contrast and brightness move 8-bit values by exact halves of a code), and rounding
/// them to even instead differed from the shader in 1.4-5.8% of the samples of `faded`.
@_transparent private func round8(_ c: SIMD8<Float>) -> SIMD8<Float> {
    let s = clamp01(c) * 255 + 0.5
    let r = (s + magicNumber) - magicNumber
    return r.replacing(with: r - 1, where: r .> s) * (1 / 255 as Float)
}

/// A normalised value as the 8-bit target stores it: clamped, rounded to the nearest code.
@inline(__always) private func codes(_ c: SIMD8<Float>) -> SIMD8<UInt8> {
    let t = clamp01(c) * 255 + magicNumber
    return SIMD8<UInt8>(truncatingIfNeeded: unsafeBitCast(t, to: SIMD8<UInt32>.self))
}
