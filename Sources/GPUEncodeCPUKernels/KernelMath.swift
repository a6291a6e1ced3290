// What the CPU kernels share: the plane pointers, the chain's description and its evaluation at
// eight pixels, and the row helpers, all in the shaders' arithmetic and order.

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

/// A table per channel: channel i becomes `tables[i][Int(clamp(c_i, 0, 1) * (count - 1) + 0.5)]`
/// (the nearest entry, as the shader indexes its uniform array).
public struct ChannelLookup: Sendable, Equatable {
    public var tables: [[Float]]

    public init(tables: [[Float]]) {
        precondition(tables.count == 3 && tables.allSatisfy { $0.count == tables[0].count && !$0.isEmpty })
        self.tables = tables
    }
}

/// One filter of a chain the kernels run; each filter's output is clamped and rounded to 8 bits,
/// as the reference's 8-bit intermediate pictures are.
public enum ChainOp: Sendable, Equatable {
    case affine(AffineMap3)
    case lookup(ChannelLookup)
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

/// What a kernel computes: normalised Y'CbCr (code / 255) to R'G'B' (`toRGB`, clamped to 0...1
/// unless the chain is transparent), the filters, back to normalised codes (`toYCbCr`), and the
/// chroma decimation's taps (`across`, five; `down`, four).
public struct PointChainDescription: Sendable {
    public var toRGB: AffineMap3
    public var clampsSource: Bool
    public var ops: [ChainOp]
    public var toYCbCr: AffineMap3
    public var across: [Float]
    public var down: [Float]

    public init(toRGB: AffineMap3, clampsSource: Bool, ops: [ChainOp], toYCbCr: AffineMap3, across: [Float], down: [Float]) {
        precondition(across.count == 5 && down.count == 4)
        (self.toRGB, self.clampsSource, self.ops, self.toYCbCr, self.across, self.down) = (toRGB, clampsSource, ops, toYCbCr, across, down)
    }
}

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

/// A chain step in the kernels' form.
enum Step {
    case affine(Map)
    case lookup(r: [Float], g: [Float], b: [Float], scale: Float)

    init(_ op: ChainOp) {
        switch op {
        case .affine(let a): self = .affine(Map(a))
        case .lookup(let l): self = .lookup(r: l.tables[0], g: l.tables[1], b: l.tables[2], scale: Float(l.tables[0].count - 1))
        }
    }
}

/// The chain as the kernels evaluate it.
struct PointChain {
    let toRGB: Map
    let clampsSource: Bool
    var steps: [Step]
    let toYCbCr: Map
    let acrossTaps: [V]
    let down: [Float]

    init(_ d: PointChainDescription) {
        toRGB = Map(d.toRGB)
        clampsSource = d.clampsSource
        steps = d.ops.map(Step.init)
        toYCbCr = Map(d.toYCbCr)
        acrossTaps = d.across.map { V(repeating: $0) }
        down = d.down
    }

    /// The chain at eight pixels: normalised Y'CbCr to filtered R'G'B'.
    @inline(__always) func evaluate(_ y: V, _ u: V, _ v: V, _ steps: [Step]) -> (V, V, V) {
        var (r, g, b) = toRGB.apply(y, u, v)
        if clampsSource { (r, g, b) = (clamp01(r), clamp01(g), clamp01(b)) }
        for step in steps {
            switch step {
            case .affine(let f): (r, g, b) = f.apply(r, g, b)
            case .lookup(let tr, let tg, let tb, let scale): (r, g, b) = (lookup(r, tr, scale), lookup(g, tg, scale), lookup(b, tb, scale))
            }
            (r, g, b) = (round8(r), round8(g), round8(b))
        }
        return (r, g, b)
    }

    /// GLSL's `table[int(clamp(c, 0.0, 1.0) * scale + 0.5)]` for eight values.
    @inline(__always) private func lookup(_ c: V, _ table: [Float], _ scale: Float) -> V {
        let s = clamp01(c) * scale + 0.5
        let r = (s + magicNumber) - magicNumber
        let index = unsafeBitCast(r.replacing(with: r - 1, where: r .> s) + magicNumber, to: SIMD8<UInt32>.self) & 0x3F_FFFF
        return table.withUnsafeBufferPointer { t in
            V(t[Int(index[0])], t[Int(index[1])], t[Int(index[2])], t[Int(index[3])],
              t[Int(index[4])], t[Int(index[5])], t[Int(index[6])], t[Int(index[7])])
        }
    }
}

// Free functions, so that they inline into the vector loops.

/// 1.5 * 2^23: adding it to a float in 0 ... 2^22 rounds it to an integer (to even).
let magicNumber: Float = 12_582_912

@_transparent func clamp01(_ c: V) -> V {
    let zero = V(repeating: 0), one = V(repeating: 1)
    return c.replacing(with: zero, where: c .< zero).replacing(with: one, where: c .> one)
}

/// GLSL's `floor(clamp(c, 0.0, 1.0) * 255.0 + 0.5) / 255.0`. The floor is exact: halves are
/// common here (contrast and brightness move 8-bit values by exact halves of a code), and rounding
/// them to even instead differed from the shader in 1.4-5.8% of the samples of `faded`.
@_transparent func round8(_ c: V) -> V {
    let s = clamp01(c) * 255 + 0.5
    let r = (s + magicNumber) - magicNumber
    return r.replacing(with: r - 1, where: r .> s) * (1 / 255 as Float)
}

/// A normalised value as the 8-bit target stores it: clamped, rounded to the nearest code.
@inline(__always) func codes(_ c: V) -> SIMD8<UInt8> {
    let t = clamp01(c) * 255 + magicNumber
    return SIMD8<UInt8>(truncatingIfNeeded: unsafeBitCast(t, to: SIMD8<UInt32>.self))
}

/// Eight code values as normalised floats.
@inline(__always) func units(_ codes: SIMD8<UInt8>) -> V {
    (unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: codes) | 0x4B00_0000, to: V.self) - 8_388_608) / 255
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
@inline(__always) func acrossRow(width w: Int, taps h: [V], into out: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>,
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
        let sum = h[0] * load(even + k) + h[1] * load(odd + k) + h[2] * load(even + k + 1) + h[3] * load(odd + k + 1)
            + h[4] * load(even + k + 2)
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

/// A row of floats split into even and odd columns.
func splitFloats(_ row: UnsafePointer<Float>, width w: Int, even: UnsafeMutablePointer<Float>, odd: UnsafeMutablePointer<Float>) {
    for k in 0..<(w / 2) {
        even[k] = row[2 * k]
        odd[k] = row[2 * k + 1]
    }
}

/// Scratch rows for each band, kept from frame to frame: a fresh allocation of this size is a
/// fresh mapping, which the kernel zeroes page by page on every frame (5% of a 1080p run).
final class ScratchRows {
    private var rows: [UnsafeMutablePointer<Float>] = []
    private var count = 0

    func prepare(bands: Int, count: Int) {
        guard bands != rows.count || count != self.count else { return }
        for p in rows { p.deallocate() }
        rows = (0..<bands).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: count)
            p.initialize(repeating: 0, count: count)
            return p
        }
        self.count = count
    }

    subscript(band: Int) -> UnsafeMutablePointer<Float> { rows[band] }

    deinit { for p in rows { p.deallocate() } }
}
