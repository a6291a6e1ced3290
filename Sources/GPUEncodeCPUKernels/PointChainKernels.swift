// The CPU kernels, in one file so that the vector helpers inline into the loops in every build
// (a debug build compiles file by file, and nothing inlines across files there): the chain's
// evaluation at eight pixels, the row helpers, the plane-native and the reference block kernels,
// all in the shaders' arithmetic and order. What they take is in KernelTypes.swift.

typealias V = SIMD8<Float>

/// A map as splatted vectors (row-major, then offsets).
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

/// A chain step in the kernels' form: plain scalars and pointers into `ChainSteps`' storage, so
/// the vector loops copy no reference-counted value and no 384-byte splatted map (that copy was a
/// `memcpy` per step and pixel group): each coefficient is broadcast from memory where it is used.
struct Step {
    /// An affine map (`m`, row-major, then `o`), else a table per channel (`r`, `g`, `b`,
    /// indexed up to `scale`).
    var isAffine: Bool
    var m: (Float, Float, Float, Float, Float, Float, Float, Float, Float)
    var o: (Float, Float, Float)
    var r: UnsafePointer<Float>?
    var g: UnsafePointer<Float>?
    var b: UnsafePointer<Float>?
    var scale: Float

    init(_ a: AffineMap3) {
        let m = a.rows, o = a.offset
        (isAffine, r, g, b, scale) = (true, nil, nil, nil, 0)
        self.m = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        self.o = (o[0], o[1], o[2])
    }

    init(tables r: UnsafePointer<Float>, _ g: UnsafePointer<Float>, _ b: UnsafePointer<Float>, scale: Float) {
        (isAffine, self.r, self.g, self.b, self.scale) = (false, r, g, b, scale)
        (m, o) = ((1, 0, 0, 0, 1, 0, 0, 0, 1), (0, 0, 0))
    }
}

/// `step`'s map (an affine step) at eight pixels, as `Map.apply` computes it.
@inline(__always) func applyAffine(_ s: UnsafePointer<Step>, _ x: V, _ y: V, _ z: V) -> (V, V, V) {
    let m = s.pointee.m, o = s.pointee.o
    return (V(repeating: o.0).addingProduct(V(repeating: m.0), x).addingProduct(V(repeating: m.1), y).addingProduct(V(repeating: m.2), z),
            V(repeating: o.1).addingProduct(V(repeating: m.3), x).addingProduct(V(repeating: m.4), y).addingProduct(V(repeating: m.5), z),
            V(repeating: o.2).addingProduct(V(repeating: m.6), x).addingProduct(V(repeating: m.7), y).addingProduct(V(repeating: m.8), z))
}

/// The steps of a chain and the tables they point into, owned together.
final class ChainSteps {
    private let steps: UnsafeMutablePointer<Step>
    private let count: Int
    private var tables: [UnsafeMutablePointer<Float>] = []

    init(_ ops: [ChainOp]) {
        steps = .allocate(capacity: max(ops.count, 1))
        count = ops.count
        for (i, op) in ops.enumerated() {
            switch op {
            case .affine(let a):
                (steps + i).initialize(to: Step(a))
            case .lookup(let l):
                let copies = l.tables.map { t -> UnsafeMutablePointer<Float> in
                    let p = UnsafeMutablePointer<Float>.allocate(capacity: t.count)
                    p.initialize(from: t, count: t.count)
                    return p
                }
                tables += copies
                (steps + i).initialize(to: Step(tables: copies[0], copies[1], copies[2], scale: Float(l.tables[0].count - 1)))
            }
        }
    }

    /// The steps to evaluate (valid while this object lives).
    var buffer: UnsafeBufferPointer<Step> { UnsafeBufferPointer(start: steps, count: count) }

    deinit {
        steps.deallocate()
        for t in tables { t.deallocate() }
    }
}

/// The chain as the kernels evaluate it: plain values only.
struct PointChain {
    let toRGB: Map
    let clampsSource: Bool
    let toYCbCr: Map
    let across: (V, V, V, V, V)
    let down: (V, V, V, V)

    init(_ d: PointChainDescription) {
        toRGB = Map(d.toRGB)
        clampsSource = d.clampsSource
        toYCbCr = Map(d.toYCbCr)
        let a = d.across.map { V(repeating: $0) }, w = d.down.map { V(repeating: $0) }
        across = (a[0], a[1], a[2], a[3], a[4])
        down = (w[0], w[1], w[2], w[3])
    }

    /// The chain at eight pixels: normalised Y'CbCr to filtered R'G'B'.
    @inline(__always) func evaluate(_ y: V, _ u: V, _ v: V, _ steps: UnsafeBufferPointer<Step>) -> (V, V, V) {
        var (r, g, b) = toRGB.apply(y, u, v)
        if clampsSource { (r, g, b) = (clamp01(r), clamp01(g), clamp01(b)) }
        var p = steps.baseAddress!
        for _ in 0..<steps.count {
            if p.pointee.isAffine {
                (r, g, b) = applyAffine(p, r, g, b)
            } else {
                let scale = p.pointee.scale
                (r, g, b) = (lookup(r, p.pointee.r.unsafelyUnwrapped, scale), lookup(g, p.pointee.g.unsafelyUnwrapped, scale),
                             lookup(b, p.pointee.b.unsafelyUnwrapped, scale))
            }
            (r, g, b) = (round8(r), round8(g), round8(b))
            p += 1
        }
        return (r, g, b)
    }
}

// Free functions, so that they inline into the vector loops.

/// 1.5 * 2^23: adding it to a float in 0 ... 2^22 rounds it to an integer (to even).
let magicNumber: Float = 12_582_912

/// GLSL's `table[int(clamp(c, 0.0, 1.0) * scale + 0.5)]` for eight values.
@_transparent func lookup(_ c: V, _ t: UnsafePointer<Float>, _ scale: Float) -> V {
    // (The integer is read from the float's bits: the standard library's conversion is a call.)
    let index = unsafeBitCast((clamp01(c) * scale + 0.5).rounded(.down) + magicNumber, to: SIMD8<UInt32>.self) & 0x3F_FFFF
    return V(t[Int(index[0])], t[Int(index[1])], t[Int(index[2])], t[Int(index[3])],
             t[Int(index[4])], t[Int(index[5])], t[Int(index[6])], t[Int(index[7])])
}

/// Clamped to 0 ... 1. (The standard library's `pointwiseMin` and `pointwiseMax` are calls.)
@_transparent func clamp01(_ c: V) -> V {
    let zero = V(repeating: 0), one = V(repeating: 1)
    return c.replacing(with: zero, where: c .< zero).replacing(with: one, where: c .> one)
}

/// GLSL's `floor(clamp(c, 0.0, 1.0) * 255.0 + 0.5) / 255.0`. The floor is exact: halves are
/// common here (contrast and brightness move 8-bit values by exact halves of a code), and rounding
/// them to even instead differed from the shader in 1.4-5.8% of the samples of `faded`.
@_transparent func round8(_ c: V) -> V {
    (clamp01(c) * 255 + 0.5).rounded(.down) * (1 / 255 as Float)
}

/// A normalised value as the 8-bit target stores it: clamped, rounded to the nearest code.
@inline(__always) func codes(_ c: V) -> SIMD8<UInt8> {
    let t = clamp01(c) * 255 + magicNumber
    return SIMD8<UInt8>(truncatingIfNeeded: unsafeBitCast(t, to: SIMD8<UInt32>.self))
}

/// Eight code values as floats (0 ... 255), read from the floats' bits.
@inline(__always) func codeValues(_ codes: SIMD8<UInt8>) -> V {
    unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: codes) | 0x4B00_0000, to: V.self) - 8_388_608
}

/// Eight code values as normalised floats.
@inline(__always) func units(_ codes: SIMD8<UInt8>) -> V {
    codeValues(codes) / 255
}

/// A code value as the shaders read it from an 8-bit texture.
@inline(__always) func unit(_ code: UInt8) -> Float { Float(code) / 255 }

@inline(__always) func load(_ p: UnsafePointer<Float>) -> V { UnsafeRawPointer(p).loadUnaligned(as: V.self) }
@inline(__always) func store(_ v: V, _ p: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: V.self) }

/// Up to eight bytes from `p` (`n` of them), the rest zero.
@inline(__always) func loadBytes(_ p: UnsafePointer<UInt8>, _ n: Int) -> SIMD8<UInt8> {
    if n == 8 { return UnsafeRawPointer(p).loadUnaligned(as: SIMD8<UInt8>.self) }
    var bytes = SIMD8<UInt8>()
    for i in 0..<n { bytes[i] = p[i] }
    return bytes
}

/// Up to eight bytes to `p` (`n` of them).
@inline(__always) func storeBytes(_ v: SIMD8<UInt8>, _ p: UnsafeMutablePointer<UInt8>, _ n: Int) {
    if n == 8 { UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<UInt8>.self) } else { for i in 0..<n { p[i] = v[i] } }
}

/// `count` code values `step` bytes apart as the shaders read them (code / 255), then the last
/// one repeated over the next eight.
func unitRow(_ codes: UnsafePointer<UInt8>, step: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
    convertRow(codes, step: step, count: count, into: out, units, unit)
}

/// `unitRow` as code values (0 ... 255), not normalised: the blur normalises once, at its output.
func codeRow(_ codes: UnsafePointer<UInt8>, step: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
    convertRow(codes, step: step, count: count, into: out, codeValues) { Float($0) }
}

/// One row of codes through `vector` (eight at a time where they are adjacent) or `scalar`, the
/// last value repeated over the next eight. (Inlined into each caller with its conversion: a
/// flag tested inside the loop cost the sepia kernel 0.7 ms a 1080p frame.)
@inline(__always) private func convertRow(_ codes: UnsafePointer<UInt8>, step: Int, count: Int, into out: UnsafeMutablePointer<Float>,
                                          _ vector: (SIMD8<UInt8>) -> V, _ scalar: (UInt8) -> Float) {
    var k = 0
    if step == 1 {
        while k + 8 <= count {
            store(vector(UnsafeRawPointer(codes + k).loadUnaligned(as: SIMD8<UInt8>.self)), out + k)
            k += 8
        }
    }
    while k < count {
        out[k] = scalar(codes[k * step])
        k += 1
    }
    for i in 0..<8 { out[count + i] = out[count - 1] }
}

/// Luma-width chroma for one luma row: `near` * 3/4 + `far` * 1/4 at even columns, the mean of
/// two neighbours at odd ones (the next past the end repeated, as `unitRow` padded it).
func upsampleRow(near: UnsafePointer<Float>, far: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>) {
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

/// The five-tap sum across (`taps`) at every chroma column of one row of `width` values (columns
/// 2k-2 .. 2k+2, the picture's edge columns repeated), summed in the shader's order. `value(x)`
/// gives column x; `scratch` holds twice `width` + 16 floats.
@inline(__always) func acrossRow(width w: Int, taps h: (V, V, V, V, V), into out: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
                                 split: (_ even: UnsafeMutablePointer<Float>, _ odd: UnsafeMutablePointer<Float>) -> Void) {
    let cw = w / 2
    // even[k + 1] = column 2k, odd[k + 1] = column 2k+1; index 0 and cw + 1: the edges repeated.
    let even = scratch, odd = scratch + (w + 7) / 8 * 8 + 8
    split(even + 1, odd + 1)
    even[0] = even[1]
    odd[0] = even[1]
    even[cw + 1] = odd[cw]
    var k = 0
    while k < cw {
        let sum = h.0 * load(even + k) + h.1 * load(odd + k) + h.2 * load(even + k + 1) + h.3 * load(odd + k + 1)
            + h.4 * load(even + k + 2)
        store(sum, out + k)
        k += 8
    }
}

/// Luma codes split into even and odd columns as normalised floats.
func splitCodes(_ y: UnsafePointer<UInt8>, width w: Int, even: UnsafeMutablePointer<Float>, odd: UnsafeMutablePointer<Float>) {
    let cw = w / 2
    var k = 0
    while k + 8 <= cw {
        let pairs = UnsafeRawPointer(y + 2 * k).loadUnaligned(as: SIMD16<UInt8>.self)
        store(units(pairs.evenHalf), even + k)
        store(units(pairs.oddHalf), odd + k)
        k += 8
    }
    while k < cw {
        even[k] = unit(y[2 * k])
        odd[k] = unit(y[2 * k + 1])
        k += 1
    }
}

/// A kernel's scratch rows, kept from frame to frame: a fresh allocation of this size is a fresh
/// mapping, which the kernel zeroes page by page on every frame (5% of a 1080p run).
final class ScratchRows {
    private(set) var base = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var count = 1

    /// `rows` rows of `padded` floats; row `i` is `base + i * padded`.
    func prepare(rows: Int, padded: Int) {
        guard rows * padded != count else { return }
        base.deallocate()
        count = rows * padded
        base = .allocate(capacity: count)
        base.initialize(repeating: 0, count: count)
    }

    deinit { base.deallocate() }
}

/// The chroma rows a kernel reads, as the shaders read them (code / 255), the last column repeated
/// past the end, by row: three kept, since a chroma row serves the rows above, at and below it.
struct ChromaRows {
    private let source: PlanePointers
    private let count: Int
    private let slots: [UnsafeMutablePointer<Float>]
    private var rowAt = [-1, -1, -1]

    /// `slots`: six scratch rows (Cb of each slot, then Cr).
    init(_ source: PlanePointers, count: Int, slots: [UnsafeMutablePointer<Float>]) {
        precondition(slots.count == 6)
        (self.source, self.count, self.slots) = (source, count, slots)
    }

    mutating func callAsFunction(_ row: Int) -> (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) {
        let slot = row % 3
        let (cb, cr) = (slots[slot], slots[3 + slot])
        if rowAt[slot] != row {
            unitRow(source.cb + row * source.chromaStride, step: source.chromaStep, count: count, into: cb)
            unitRow(source.cr + row * source.chromaStride, step: source.chromaStep, count: count, into: cr)
            rowAt[slot] = row
        }
        return (cb, cr)
    }
}

/// What both kernels hold: the chain, its steps (replaced when keyframed values move) and scratch.
public class PointChainKernel: @unchecked Sendable {
    let chain: PointChain
    var ops: ChainSteps
    let scratch = ScratchRows()

    init(_ description: PointChainDescription) {
        ops = ChainSteps(description.ops)
        chain = PointChain(description)
    }

    /// Replaces the filters (keyframed values at a new time).
    public func setOps(_ ops: [ChainOp]) {
        self.ops = ChainSteps(ops)
    }
}

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
public final class PlaneNativeKernel: PointChainKernel, @unchecked Sendable {
    public override init(_ description: PointChainDescription) {
        super.init(description)
    }

    /// Filters `s` into `o`, both `w` x `h` (even): the output's chroma rows `rows` and the luma rows
    /// beside them (all of them by default; a band of them reads the rows around it as well).
    public func run(_ s: PlanePointers, into o: PlanePointers, width w: Int, height h: Int, rows: Range<Int>? = nil) {
        precondition(w % 2 == 0 && h % 2 == 0 && w >= 2 && h >= 2)
        let cw = w / 2
        let padded = (w + 7) / 8 * 8 + 8
        scratch.prepare(rows: 21, padded: padded)
        // Scratch: chroma rows upsampled to luma width for two luma rows, the decimated luma of a
        // chroma row, the horizontally filtered luma rows the decimation reads (by row, 6 kept),
        // and the chroma rows read (by row, 3 kept).
        let scratch = self.scratch.base
        let (u0, v0, u1, v1) = (scratch, scratch + padded, scratch + 2 * padded, scratch + 3 * padded)
        let lumaDown = scratch + 4 * padded
        let evenOdd = scratch + 7 * padded
        let filtered = scratch + 9 * padded
        let taps = chain.across
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
        var chroma = ChromaRows(s, count: cw, slots: (15..<21).map { scratch + $0 * padded })
        let down = chain.down
        for m in rows ?? 0..<(h / 2) {
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
                store(down.0 * load(rA + k) + down.1 * load(r0 + k) + down.2 * load(r1 + k) + down.3 * load(rB + k), lumaDown + k)
                k += 8
            }
            chromaRow(luma: lumaDown, cb: cbB, cr: crB, count: cw, cbOut: o.cb + m * o.chromaStride, crOut: o.cr + m * o.chromaStride,
                      step: o.chromaStep)
        }
    }

    private func lumaRow(_ y: UnsafePointer<UInt8>, u: UnsafePointer<Float>, v: UnsafePointer<Float>, width w: Int,
                         into out: UnsafeMutablePointer<UInt8>) {
        let c = chain.toYCbCr
        let steps = ops.buffer
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
        let steps = ops.buffer
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
public final class ReferenceBlockKernel: PointChainKernel, @unchecked Sendable {
    public override init(_ description: PointChainDescription) {
        precondition(description.down[1] == description.down[2], "the inner rows share one weight down")
        super.init(description)
    }

    /// Filters `s` into `o`, both `w` x `h` (even): the output's chroma rows `rows` and the luma rows
    /// beside them (all of them by default; a band of them reads the rows around it as well).
    public func run(_ s: PlanePointers, into o: PlanePointers, width w: Int, height h: Int, rows: Range<Int>? = nil) {
        precondition(w % 2 == 0 && h % 2 == 0 && w >= 2 && h >= 2)
        let cw = w / 2
        let padded = (w + 7) / 8 * 8 + 8
        scratch.prepare(rows: 36, padded: padded)
        let base = scratch.base
        func row(_ i: Int) -> UnsafeMutablePointer<Float> { base + i * padded }
        // Scratch: upsampled chroma for two luma rows (0-3), the two rows' R'G'B' (4-9), the
        // even/odd split (10-11), the inner sums across (12-14), the chroma rows read (15-20, by
        // row), the luma across (21-26, by row), the outer rows' chroma and their R'G'B' (27-35).
        let (u0, v0, u1, v1) = (row(0), row(1), row(2), row(3))
        let rgb0 = [row(4), row(5), row(6)], rgb1 = [row(7), row(8), row(9)]
        let evenOdd = row(10)
        let inner = [row(12), row(13), row(14)]
        let taps = chain.across
        var chroma = ChromaRows(s, count: cw, slots: (15..<21).map { row($0) })
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
        let down = chain.down
        for m in rows ?? 0..<(h / 2) {
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
                let steps = ops.buffer
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
                let r = down.0 * load(top[0] + k) + down.3 * load(bottom[0] + k) + down.1 * load(inner[0] + k)
                let g = down.0 * load(top[1] + k) + down.3 * load(bottom[1] + k) + down.1 * load(inner[1] + k)
                let b = down.0 * load(top[2] + k) + down.3 * load(bottom[2] + k) + down.1 * load(inner[2] + k)
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
        let steps = ops.buffer
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
