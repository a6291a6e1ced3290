/// A point filter written as an affine map of R'G'B' (before the chain's clamp): output channel i
/// is `rows[4i] * r + rows[4i+1] * g + rows[4i+2] * b + rows[4i+3]`, alpha untouched. It is the same
/// function as the filter's GLSL, given as numbers so that a renderer can run the filter without
/// a shader (the CPU kernels) and compose it with others; FilterTests hold each one to its GLSL.
public struct ColourAffine: Sendable, Equatable {
    /// Three rows of (r, g, b, offset).
    public var rows: [Double]

    public init(rows: [Double]) {
        precondition(rows.count == 12, "three rows of four")
        self.rows = rows
    }

    public static let identity = ColourAffine(rows: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0])

    /// A 4x4 matrix (rows are the output R, G, B, A; `ColorMatrixFilter`'s layout) acting on (r, g,
    /// b, 1); nil when its alpha row is not (0, 0, 0, 1), which would change alpha.
    public init?(matrix4 m: [Double]) {
        guard m.count == 16, Array(m[12..<16]) == [0, 0, 0, 1] else { return nil }
        self.init(rows: Array(m[0..<12]))
    }

    /// GLSL's `mix(c, self(c), t)`: the original weighted 1 - t, this map t.
    public func mixed(_ t: Double) -> ColourAffine {
        ColourAffine(rows: (0..<12).map { k in (1 - t) * ColourAffine.identity.rows[k] + t * rows[k] })
    }

    /// Rec. 709 grey (`dot(c.rgb, vec3(0.2125, 0.7154, 0.0721))`, GPUImage's weights) in every channel.
    public static let grey = ColourAffine(rows: (0..<3).flatMap { _ in [0.2125, 0.7154, 0.0721, 0] })

    /// `mix(grey, c, s)`: saturation `s` (grey weighted 1 - s).
    public static func saturation(_ s: Double) -> ColourAffine { grey.mixed(1 - s) }

    /// `(c - 0.5) * k + 0.5 + b`: contrast `k` about mid-grey, then `b` added, after this map.
    public func contrast(_ k: Double, plus b: Double = 0) -> ColourAffine {
        ColourAffine(rows: (0..<12).map { $0 % 4 == 3 ? (rows[$0] - 0.5) * k + 0.5 + b : rows[$0] * k })
    }
}

extension FilterInstance {
    /// The filter as an affine map of R'G'B' at `time` seconds (keyframed parameters at their value
    /// then), or nil when it is not one (its declaration has no `affine`, or these values are not).
    public func affine(at time: Double) -> ColourAffine? {
        declaration.affine?(self, time)
    }

    /// The filter as a table per channel, or nil when it is not one.
    public var channelTables: ChannelTables? { declaration.lookup?(self) }

    /// Several numbers (a colour, a vector) at `time` (keyframes evaluated).
    public func numbers(_ name: String, at time: Double) -> [Double] {
        if case .animated(let k) = self[name] { return k.value(at: time).doubles }
        return doubles(name)
    }

    /// A number parameter's value at `time` (keyframes evaluated).
    public func number(_ name: String, at time: Double) -> Double {
        if case .animated(let k) = self[name] { return k.value(at: time).double }
        return double(name)
    }

    /// Whether any parameter changes over time.
    public var isAnimated: Bool {
        values.values.contains { if case .animated = $0 { return true } else { return false } }
    }

    /// Every keyframe's time, of every parameter (none when nothing is keyframed).
    public var keyframeTimes: [Double] {
        values.values.flatMap { value -> [Double] in if case .animated(let k) = value { return k.times } else { return [] } }
    }
}

extension ColourAffine {
    /// Whether no output channel takes a negative share of an input channel (what greys, tints,
    /// desaturations, brightness and lower contrast are; hue turns and raised saturation are not).
    public var isNonNegative: Bool {
        [0, 1, 2, 4, 5, 6, 8, 9, 10].allSatisfy { rows[$0] >= 0 }
    }

    /// The most the map stretches a difference between colours of equal grey (a vector in the plane
    /// orthogonal to (1, 1, 1)), measured in that plane: the largest singular value of the map's
    /// 3x3 part restricted to it. Saturation s gives s, contrast c gives c, a grey 0, sepia 0.1, a
    /// hue turn 1.
    public var colourDifferenceGain: Double {
        // An orthonormal basis of the plane: (1, -1, 0) / sqrt 2 and (1, 1, -2) / sqrt 6.
        let b: [[Double]] = [[1 / 2.0.squareRoot(), -1 / 2.0.squareRoot(), 0], [1 / 6.0.squareRoot(), 1 / 6.0.squareRoot(), -2 / 6.0.squareRoot()]]
        func apply(_ v: [Double]) -> [Double] { (0..<3).map { i in (0..<3).reduce(0) { $0 + rows[4 * i + $1] * v[$1] } } }
        func dot(_ a: [Double], _ c: [Double]) -> Double { zip(a, c).reduce(0) { $0 + $1.0 * $1.1 } }
        // G = B^T M B, 2x2; its largest singular value from its Frobenius norm and determinant.
        let g = b.map { row in b.map { column in dot(row, apply(column)) } }
        let frobenius = g.joined().reduce(0) { $0 + $1 * $1 }
        let det = g[0][0] * g[1][1] - g[0][1] * g[1][0]
        return ((frobenius + max(frobenius * frobenius - 4 * det * det, 0).squareRoot()) / 2).squareRoot()
    }
}

/// A point filter as a table per channel: output channel i is
/// `tables[i][Int(clamp(c_i, 0, 1) * (count - 1) + 0.5)]` (the nearest entry), alpha untouched.
public struct ChannelTables: Sendable, Equatable {
    /// Three tables (R, G, B) of one length.
    public var tables: [[Double]]

    public init(tables: [[Double]]) {
        precondition(tables.count == 3 && tables.allSatisfy { $0.count == tables[0].count && !$0.isEmpty })
        self.tables = tables
    }
}
