// The renderer's plane blur (a large Gaussian on the Y'CbCr planes, computed exactly on a grid of
// every 4th luma pixel and every 2nd chroma sample, then interpolated back) on the CPU in 8-lane
// vectors. The grid is kept in single precision, where the renderer stores its column and grid
// passes in 8-bit targets (a code of rounding); the interpolation is the renderer's.

/// A large Gaussian blur of an 8-bit 4:2:0 frame's planes, as they are (no matrix, no clamp but
/// the output codes'): Y with the luma taps, Cb and Cr with the chroma taps at chroma resolution,
/// each truncated at its radius and clamped to the plane's edge.
/// - The grid: luma pixel (4j, 4(i-1)) and chroma sample (2j, 2(i-1)) for grid row i (one row above
///   the picture, two below its last, for the cubic), blurred down the columns at the grid's rows,
///   then across at its columns. Across, a row is split by column phase (x mod 4 for luma, mod 2
///   for chroma), so the taps of eight neighbouring grid columns are eight neighbouring values.
/// - The output: each row the Catmull-Rom of the four grid rows around it (luma row 2m + t at
///   fraction (m mod 2) / 2 + t / 4 past grid row m / 2 + 1; chroma row m at (m mod 2) / 2), then
///   linear across (luma column 4j + c at c / 4 between grid columns j and j + 1, chroma sample
///   2j + 1 halfway).
///
/// The source's matrix and range must be the output's: the renderer's writer takes each value to
/// R'G'B' and back, which gives the value itself.
///
/// Built for AVX2 and FMA (Package.swift): call it only where `CPUFeatures` says the machine has them.
public final class GridBlurKernel: @unchecked Sendable {
    /// weight[d] for distance d = 0 ... radius, normalised over -radius ... radius.
    private let luma: [Float]
    private let chroma: [Float]
    private let lumaPlane = GridPlane()
    private let cbPlane = GridPlane()
    private let crPlane = GridPlane()
    private let rows = ScratchRows()

    /// `luma`, `chroma`: each kernel's weights by distance, from the centre out to its radius.
    public init(luma: [Float], chroma: [Float]) {
        precondition(luma.count >= 2 && chroma.count >= 2, "a radius of at least 1")
        (self.luma, self.chroma) = (luma, chroma)
    }

    /// Blurs `s` into `o`, both `w` x `h` (`w` a multiple of 8, `h` even).
    public func run(_ s: PlanePointers, into o: PlanePointers, width w: Int, height h: Int) {
        precondition(w % 8 == 0 && h % 2 == 0 && w >= 8 && h >= 2)
        let gridWidth = w / 4 + 1, gridHeight = (h - 1) / 4 + 4
        lumaPlane.blur(s.y, stride: s.yStride, step: 1, width: w, height: h, phases: 4, rowStep: 4, weights: luma,
                       gridWidth: gridWidth, gridHeight: gridHeight)
        cbPlane.blur(s.cb, stride: s.chromaStride, step: s.chromaStep, width: w / 2, height: h / 2, phases: 2, rowStep: 2,
                     weights: chroma, gridWidth: gridWidth, gridHeight: gridHeight)
        crPlane.blur(s.cr, stride: s.chromaStride, step: s.chromaStep, width: w / 2, height: h / 2, phases: 2, rowStep: 2,
                     weights: chroma, gridWidth: gridWidth, gridHeight: gridHeight)
        let padded = (gridWidth + 31) / 32 * 32 + 8
        rows.prepare(rows: 3, padded: padded)
        let (ey, ecb, ecr) = (rows.base, rows.base + padded, rows.base + 2 * padded)
        for m in 0..<(h / 2) {
            let i = m / 2 + 1
            let f: Float = m % 2 == 1 ? 0.5 : 0
            for t in 0..<2 {
                lumaPlane.interpolateDown(row: i, fraction: f + 0.25 * Float(t), into: ey)
                interpolateLuma(ey, width: w, into: o.y + (2 * m + t) * o.yStride)
            }
            cbPlane.interpolateDown(row: i, fraction: f, into: ecb)
            crPlane.interpolateDown(row: i, fraction: f, into: ecr)
            interpolateChroma(ecb, ecr, count: w / 2, cb: o.cb + m * o.chromaStride, cr: o.cr + m * o.chromaStride, step: o.chromaStep)
        }
    }

    /// One output chroma row from its rows of grid values: sample 2j is e[j], 2j + 1 halfway to
    /// e[j + 1]. Eight samples at a time, Cb and Cr interleaved where the output is (NV12).
    private func interpolateChroma(_ ecb: UnsafeMutablePointer<Float>, _ ecr: UnsafeMutablePointer<Float>, count: Int,
                                   cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>, step: Int) {
        @inline(__always) func samples(_ e: UnsafeMutablePointer<Float>) -> SIMD8<UInt8> {
            let (a, b) = (load(e), load(e + 1))
            let mid = 0.5 * (a + b)
            return codes(V(a[0], mid[0], a[1], mid[1], a[2], mid[2], a[3], mid[3]) * (1 / 255 as Float))
        }
        var k = 0
        while k < count {
            let n = min(8, count - k)
            let (u, v) = (samples(ecb + k / 2), samples(ecr + k / 2))
            if step == 2 && n == 8 && cr == cb + 1 {
                var both = SIMD16<UInt8>()
                both.evenHalf = u
                both.oddHalf = v
                UnsafeMutableRawPointer(cb + 2 * k).storeBytes(of: both, as: SIMD16<UInt8>.self)
            } else if step == 1 {
                storeBytes(u, cb + k, n)
                storeBytes(v, cr + k, n)
            } else {
                for i in 0..<n {
                    cb[(k + i) * step] = u[i]
                    cr[(k + i) * step] = v[i]
                }
            }
            k += 8
        }
    }

    /// One output luma row from its row of grid values `e` (w / 4 + 1 of them): column 4j + c is
    /// e[j] + (e[j + 1] - e[j]) c / 4.
    private func interpolateLuma(_ e: UnsafeMutablePointer<Float>, width w: Int, into out: UnsafeMutablePointer<UInt8>) {
        let phase = V(0, 0.25, 0.5, 0.75, 0, 0.25, 0.5, 0.75)
        var j = 0
        while j < w / 4 {
            let (a, b, c) = (e[j], e[j + 1], e[j + 2])
            let start = V(lowHalf: SIMD4(repeating: a), highHalf: SIMD4(repeating: b))
            let step = V(lowHalf: SIMD4(repeating: b - a), highHalf: SIMD4(repeating: c - b))
            storeBytes(codes(start.addingProduct(step, phase) * (1 / 255 as Float)), out + 4 * j, 8)
            j += 2
        }
    }
}

/// One plane's grid, kept from frame to frame, and the rows it is made from.
final class GridPlane {
    /// Grid row i at `grid + i * gridStride`.
    private var grid = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var gridStride = 0
    /// The source rows a grid row's taps read, as floats (row r in slot r mod `ringRows`).
    private var ring = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var ringRows = 0
    private var ringStride = 0
    /// One blurred row split by column phase: phase c's value k at `split + c * splitStride + pad + k`.
    private var split = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var splitStride = 0
    private var pad = 0
    private var size = (0, 0, 0, 0, 0)

    deinit {
        grid.deallocate()
        ring.deallocate()
        split.deallocate()
    }

    private func prepare(width: Int, gridWidth: Int, gridHeight: Int, radius: Int, phases: Int) {
        guard size != (width, gridWidth, gridHeight, radius, phases) else { return }
        size = (width, gridWidth, gridHeight, radius, phases)
        for p in [grid, ring, split] { p.deallocate() }
        gridStride = (gridWidth + 31) / 32 * 32 + 8
        grid = .allocate(capacity: gridStride * gridHeight)
        grid.initialize(repeating: 0, count: gridStride * gridHeight)
        ringRows = 2 * radius + 2
        ringStride = (width + 7) / 8 * 8 + 8
        ring = .allocate(capacity: ringStride * ringRows)
        ring.initialize(repeating: 0, count: ringStride * ringRows)
        pad = radius / phases + 2
        splitStride = pad + (gridWidth + 31) / 32 * 32 + pad + 8
        split = .allocate(capacity: splitStride * phases)
        split.initialize(repeating: 0, count: splitStride * phases)
    }

    /// Fills the grid from a plane of `width` x `height` codes (`step` bytes apart in a row, rows
    /// `stride` apart): grid row i is source row `rowStep` (i - 1), grid column j source column
    /// `phases` j (both clamped to the plane), under `weights` down and across.
    func blur(_ plane: UnsafePointer<UInt8>, stride: Int, step: Int, width: Int, height: Int, phases: Int, rowStep: Int,
              weights: [Float], gridWidth: Int, gridHeight: Int) {
        let radius = weights.count - 1
        prepare(width: width, gridWidth: gridWidth, gridHeight: gridHeight, radius: radius, phases: phases)
        var converted = -1
        var taps = [UnsafeMutablePointer<Float>](repeating: ring, count: 2 * radius + 1)
        for i in 0..<gridHeight {
            let centre = rowStep * (i - 1)
            let last = min(centre + radius, height - 1)
            while converted < last {
                converted += 1
                codeRow(plane + converted * stride, step: step, count: width, into: ring + (converted % ringRows) * ringStride)
            }
            for d in -radius...radius {
                taps[d + radius] = ring + (min(max(centre + d, 0), height - 1) % ringRows) * ringStride
            }
            blurDown(taps, weights: weights, width: width, phases: phases)
            blurAcross(weights: weights, width: width, phases: phases, gridWidth: gridWidth, into: grid + i * gridStride)
        }
    }

    /// The rows `taps` (centre at `radius`) under `weights`, split by column phase into `split`,
    /// its edges padded with the plane's edge columns.
    private func blurDown(_ taps: [UnsafeMutablePointer<Float>], weights: [Float], width: Int, phases: Int) {
        let radius = weights.count - 1
        taps.withUnsafeBufferPointer { rows in
            weights.withUnsafeBufferPointer { w in
                // Four vectors a step: four independent sums, so the multiply-adds overlap instead
                // of each waiting for the one before (a sum of 49 taps is a chain of 25 of them).
                var x = 0
                while x + 32 <= width {
                    let k = V(repeating: w[0]), c = rows[radius] + x
                    var (s0, s1, s2, s3) = (k * load(c), k * load(c + 8), k * load(c + 16), k * load(c + 24))
                    for d in 1...radius {
                        let k = V(repeating: w[d]), a = rows[radius + d] + x, b = rows[radius - d] + x
                        s0 = s0.addingProduct(k, load(a) + load(b))
                        s1 = s1.addingProduct(k, load(a + 8) + load(b + 8))
                        s2 = s2.addingProduct(k, load(a + 16) + load(b + 16))
                        s3 = s3.addingProduct(k, load(a + 24) + load(b + 24))
                    }
                    splitLanes(s0, at: x, phases: phases)
                    splitLanes(s1, at: x + 8, phases: phases)
                    splitLanes(s2, at: x + 16, phases: phases)
                    splitLanes(s3, at: x + 24, phases: phases)
                    x += 32
                }
                while x < width {
                    var sum = V(repeating: w[0]) * load(rows[radius] + x)
                    for d in 1...radius {
                        sum = sum.addingProduct(V(repeating: w[d]), load(rows[radius + d] + x) + load(rows[radius - d] + x))
                    }
                    splitLanes(sum, at: x, phases: phases)
                    x += 8
                }
            }
        }
        let columns = width / phases
        let (first, lastValue) = (split[pad], split[(phases - 1) * splitStride + pad + columns - 1])
        for c in 0..<phases {
            let row = split + c * splitStride
            for k in 0..<pad { row[k] = first }
            for k in (pad + columns)..<splitStride { row[k] = lastValue }
        }
    }

    /// Columns x ... x + 7 of a blurred row into `split`, by phase.
    @inline(__always) private func splitLanes(_ sum: V, at x: Int, phases: Int) {
        for lane in 0..<8 {
            split[(lane % phases) * splitStride + pad + (x + lane) / phases] = sum[lane]
        }
    }

    /// The split row under `weights` across, at every grid column: column j's tap at distance d
    /// is phase d mod `phases`, value j + floor(d / `phases`).
    private func blurAcross(weights: [Float], width: Int, phases: Int, gridWidth: Int, into out: UnsafeMutablePointer<Float>) {
        let radius = weights.count - 1
        let shift = phases == 4 ? 2 : 1
        weights.withUnsafeBufferPointer { w in
            // Four vectors a step, as `blurDown`.
            var j = 0
            while j < gridWidth {
                let k = V(repeating: w[0]), c = split + pad + j
                var (s0, s1, s2, s3) = (k * load(c), k * load(c + 8), k * load(c + 16), k * load(c + 24))
                for d in 1...radius {
                    let k = V(repeating: w[d])
                    let a = split + (d & (phases - 1)) * splitStride + pad + j + (d >> shift)
                    let b = split + (-d & (phases - 1)) * splitStride + pad + j + (-d >> shift)
                    s0 = s0.addingProduct(k, load(a) + load(b))
                    s1 = s1.addingProduct(k, load(a + 8) + load(b + 8))
                    s2 = s2.addingProduct(k, load(a + 16) + load(b + 16))
                    s3 = s3.addingProduct(k, load(a + 24) + load(b + 24))
                }
                store(s0, out + j)
                store(s1, out + j + 8)
                store(s2, out + j + 16)
                store(s3, out + j + 24)
                j += 32
            }
        }
    }

    /// Grid row `row` + `fraction` (0 ... 1) as the Catmull-Rom of grid rows `row` - 1 ... `row` + 2,
    /// at every grid column, into `out`.
    func interpolateDown(row: Int, fraction t: Float, into out: UnsafeMutablePointer<Float>) {
        let (t2, t3) = (t * t, t * t * t)
        let k0 = V(repeating: 0.5 * (-t3 + 2 * t2 - t)), k1 = V(repeating: 0.5 * (3 * t3 - 5 * t2 + 2))
        let k2 = V(repeating: 0.5 * (-3 * t3 + 4 * t2 + t)), k3 = V(repeating: 0.5 * (t3 - t2))
        let (a, b, c, d) = (grid + (row - 1) * gridStride, grid + row * gridStride, grid + (row + 1) * gridStride, grid + (row + 2) * gridStride)
        var j = 0
        while j < gridStride - 8 {
            store(k0 * load(a + j) + k1 * load(b + j) + k2 * load(c + j) + k3 * load(d + j), out + j)
            j += 8
        }
    }
}
