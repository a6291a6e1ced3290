import Glibc

/// A monotone cubic through control points (Fritsch and Carlson, "Monotone Piecewise Cubic
/// Interpolation", SIAM J. Numer. Anal. 17(2), 1980): Hermite segments whose tangents are limited
/// so the curve never overshoots between points, unlike the natural spline GPUImage uses (which can
/// ring below 0 or above 1 and reverse on tightly spaced points). Flat before the first point and
/// after the last, as Photoshop's Curves.
public struct MonotoneCubic: Sendable {
    public let xs: [Double]
    public let ys: [Double]
    public let tangents: [Double]

    /// `points` are [x, y] pairs; they are sorted by x and repeated x values dropped.
    public init(points: [[Double]]) {
        var xs: [Double] = [], ys: [Double] = []
        for p in points.filter({ $0.count >= 2 }).sorted(by: { $0[0] < $1[0] }) where xs.last != p[0] {
            xs.append(p[0])
            ys.append(p[1])
        }
        if xs.isEmpty { xs = [0, 1]; ys = [0, 1] }
        let n = xs.count
        var m = [Double](repeating: 0, count: n)
        if n >= 2 {
            var d = [Double](repeating: 0, count: n - 1)
            for k in 0..<(n - 1) { d[k] = (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k]) }
            m[0] = d[0]
            m[n - 1] = d[n - 2]
            for k in 1..<(n - 1) where n > 2 {
                // Where the data turns (or is flat) the curve must be flat there too.
                m[k] = d[k - 1] * d[k] <= 0 ? 0 : (d[k - 1] + d[k]) / 2
            }
            for k in 0..<(n - 1) {
                if d[k] == 0 { m[k] = 0; m[k + 1] = 0; continue }
                let a: Double = m[k] / d[k], b: Double = m[k + 1] / d[k]
                let s: Double = a * a + b * b
                // Outside the circle of radius 3 the segment could overshoot: pull both tangents in.
                if s > 9 {
                    let t: Double = 3 / s.squareRoot()
                    m[k] = t * a * d[k]
                    m[k + 1] = t * b * d[k]
                }
            }
        }
        self.xs = xs
        self.ys = ys
        self.tangents = m
    }

    public func callAsFunction(_ x: Double) -> Double {
        let n = xs.count
        if n == 1 || x <= xs[0] { return ys[0] }
        if x >= xs[n - 1] { return ys[n - 1] }
        var k = 0
        while k < n - 2 && x > xs[k + 1] { k += 1 }
        let h = xs[k + 1] - xs[k]
        let t = (x - xs[k]) / h
        let t2 = t * t, t3 = t2 * t
        return (2 * t3 - 3 * t2 + 1) * ys[k] + (t3 - 2 * t2 + t) * h * tangents[k]
            + (-2 * t3 + 3 * t2) * ys[k + 1] + (t3 - t2) * h * tangents[k + 1]
    }
}

/// Photoshop's Curves file (.acv): big-endian int16 version (1 or 4) and curve count, then per
/// curve a point count and (output, input) pairs in 0...255. The curves are composite, red, green,
/// blue (later ones, which Photoshop may add, are ignored; missing ones are straight lines).
public enum ACVFile {
    /// The curves as [x, y] points in 0...1: composite, red, green, blue.
    public static func parse(_ bytes: [UInt8]) throws -> [[[Double]]] {
        var offset = 0
        func int16(_ what: String) throws -> Int {
            guard offset + 2 <= bytes.count else {
                throw FilterError("the .acv file ends at byte \(bytes.count) while reading \(what)")
            }
            let v = Int(Int16(bitPattern: UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])))
            offset += 2
            return v
        }
        let version = try int16("the version")
        guard version == 1 || version == 4 else {
            throw FilterError("not a Photoshop curves file: version \(version) at byte 0 (expected 1 or 4)")
        }
        let count = try int16("the curve count")
        guard count >= 1 else { throw FilterError("the .acv file has \(count) curves at byte 2 (expected at least 1)") }
        var curves: [[[Double]]] = []
        for c in 0..<min(count, 4) {
            let countAt = offset
            let n = try int16("the point count of curve \(c + 1)")
            guard (2...19).contains(n) else {
                throw FilterError("curve \(c + 1) of the .acv file has \(n) points at byte \(countAt) (expected 2 to 19)")
            }
            var points: [[Double]] = []
            for p in 0..<n {
                let at = offset
                let output = try int16("point \(p + 1) of curve \(c + 1)")
                let input = try int16("point \(p + 1) of curve \(c + 1)")
                guard (0...255).contains(output), (0...255).contains(input) else {
                    throw FilterError("point \(p + 1) of curve \(c + 1) of the .acv file (byte \(at)) is (\(input), \(output)); values must be 0 to 255")
                }
                if let last = points.last, Double(input) / 255 <= last[0] {
                    throw FilterError("point \(p + 1) of curve \(c + 1) of the .acv file (byte \(at)): input values must increase")
                }
                points.append([Double(input) / 255, Double(output) / 255])
            }
            curves.append(points)
        }
        while curves.count < 4 { curves.append([[0, 0], [1, 1]]) }
        return curves
    }
}

/// GPUImageToneCurveFilter: a curve per channel, then the composite (rgb) curve on the result of
/// each. Evaluated on the CPU into a 256-entry float table, one entry per 8-bit input value, read
/// with texelFetch at the nearest code value.
public enum ToneCurveFilter {
    public static let identityPoints: ParameterValue = .points([[0, 0], [1, 1]])

    /// Table entries: the composed curves sampled at i / (count - 1).
    public static let count = 256

    /// The curves a filter instance uses (composite, red, green, blue): the .acv file's when one
    /// is given, else the point parameters.
    public static func curves(_ f: FilterInstance, _ context: ResourceContext) throws -> [[[Double]]] {
        let acv = f.string("acv")
        if !acv.isEmpty {
            let bytes = try context.readFile(acv, kind: .acv)
            do { return try ACVFile.parse(bytes) } catch let e as FilterError { throw FilterError("\(acv): \(e.message)") }
        }
        return ["rgb", "red", "green", "blue"].map { name in
            if case .points(let p) = f[name] { return p }
            return [[0, 0], [1, 1]]
        }
    }

    /// RGBA floats, `count` entries: entry i is (rgb(red(x)), rgb(green(x)), rgb(blue(x)), 1), x = i / 255.
    public static func table(_ curves: [[[Double]]]) -> [Float] {
        let splines = curves.map(MonotoneCubic.init(points:))
        var data = [Float](repeating: 1, count: count * 4)
        for i in 0..<count {
            let x = Double(i) / Double(count - 1)
            for c in 0..<3 {
                let y = splines[0](min(max(splines[c + 1](x), 0), 1))
                data[i * 4 + c] = Float(min(max(y, 0), 1))
            }
        }
        return data
    }

    static func points(_ name: String, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .points, default: identityPoints, summary)
    }

    public static let declaration = FilterDeclaration(
        name: "toneCurve",
        summary: "Curves per channel, then a composite RGB curve (GPUImage's tone curve; monotone cubic through the points instead of GPUImage's natural spline, so no overshoot), or a Photoshop .acv file.",
        category: .color,
        parameters: [
            points("rgb", "composite curve, applied to each channel after its own curve"),
            points("red", "red curve"),
            points("green", "green curve"),
            points("blue", "blue curve"),
            .file("acv", extensions: ["acv"], "Photoshop curves file (composite, red, green, blue); when given it replaces all four point parameters"),
        ],
        kind: .point(glsl: """
        // The table as a uniform array: indexing it is cheaper than a texture fetch on software GL.
        // The nearest entry: between filters colours are 8-bit code values already (exact).
        uniform vec4 {{p}}table[\(count)];
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            ivec3 i = ivec3(clamp(c.rgb, 0.0, 1.0) * \(Double(count - 1)) + 0.5);
            return vec4({{p}}table[i.r].r, {{p}}table[i.g].g, {{p}}table[i.b].b, c.a);
        }
        """),
        resources: { f, context in ["table": .uniforms(table(try curves(f, context)))] },
        lookup: { f in
            guard let data = try? table(curves(f, f.context)) else { return nil }
            return ChannelTables(tables: (0..<3).map { c in (0..<count).map { Double(data[$0 * 4 + c]) } })
        }
    )
}
