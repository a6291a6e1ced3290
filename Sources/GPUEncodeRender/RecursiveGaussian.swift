import CEGL
import Glibc

// PROTOTYPE (issue 15, branch blur-o1): a recursive (IIR) Gaussian in GLES 3.1 compute shaders,
// one invocation per row, then per column, running along the line: O(1) work per pixel whatever
// sigma. Chosen by `TransferOptions.blurMethod` (the CLI's GPUENCODE_BLUR_METHOD) for measuring
// against the reduced pyramid; not wired in otherwise.

/// Coefficients of a recursive Gaussian along one line.
struct RecursiveGaussian {
    enum Form {
        /// y = anticausal(causal(x)), all-pole both ways (van Vliet, Young & Verbeek 1998).
        case cascade
        /// y = causal(x) + anticausal(x) (Deriche 1993).
        case parallel
    }
    var form: Form
    /// Causal: out[n] = sum_i b[i] x[n - i] - sum_k a[k] out[n - 1 - k].
    var b: [Double]
    var a: [Double]
    /// Parallel form's anticausal part: out[n] = sum_i c[i] x[n + 1 + i] - sum_k a[k] out[n + 1 + k].
    var c: [Double] = []
    /// Cascade form's anticausal start (Triggs & Sdika 2006, for clamp-to-edge): y[N + j] =
    /// u + sum_k m[j][k] (w[N - 1 - k] - u), u the last input, w the causal output.
    var m: [[Double]] = []

    struct Complex {
        var re: Double, im: Double
        init(_ re: Double, _ im: Double = 0) { self.re = re; self.im = im }
        static func + (l: Complex, r: Complex) -> Complex { Complex(l.re + r.re, l.im + r.im) }
        static func - (l: Complex, r: Complex) -> Complex { Complex(l.re - r.re, l.im - r.im) }
        static func * (l: Complex, r: Complex) -> Complex { Complex(l.re * r.re - l.im * r.im, l.re * r.im + l.im * r.re) }
        static func / (l: Complex, r: Complex) -> Complex {
            let d = r.re * r.re + r.im * r.im
            return Complex((l.re * r.re + l.im * r.im) / d, (l.im * r.re - l.re * r.im) / d)
        }
        var conjugate: Complex { Complex(re, -im) }
        var magnitude: Double { (re * re + im * im).squareRoot() }
        var angle: Double { atan2(im, re) }
        static func polar(_ r: Double, _ t: Double) -> Complex { Complex(r * cos(t), r * sin(t)) }
    }

    /// Coefficients of prod (1 - p z^-1): [1, a1, a2, ...].
    static func polynomial(_ poles: [Complex]) -> [Complex] {
        var p = [Complex(1)]
        for z in poles {
            var next = p + [Complex(0)]
            for i in 0..<p.count { next[i + 1] = next[i + 1] - p[i] * z }
            p = next
        }
        return p
    }

    /// van Vliet, Young & Verbeek's poles (for sigma 2, L2-optimal), scaled so the cascade's
    /// variance is sigma^2 exactly: sum over poles p of 2 p / (1 - p)^2.
    static func vanVliet(sigma: Double, order: Int) -> RecursiveGaussian {
        let d0: [Complex] = order == 4
            ? [Complex(1.13228, 1.28114), Complex(1.13228, -1.28114), Complex(1.78534, 0.46763), Complex(1.78534, -0.46763)]
            : [Complex(1.41650, 1.00829), Complex(1.41650, -1.00829), Complex(1.86543)]
        func poles(_ q: Double) -> [Complex] { d0.map { Complex(1) / Complex.polar(pow($0.magnitude, 1 / q), $0.angle / q) } }
        func variance(_ q: Double) -> Double {
            poles(q).reduce(Complex(0)) { s, p in s + Complex(2) * p / ((Complex(1) - p) * (Complex(1) - p)) }.re
        }
        var lo = 0.1, hi = 50.0
        for _ in 0..<80 {
            let q = (lo + hi) / 2
            if variance(q) < sigma * sigma { lo = q } else { hi = q }
        }
        let a = polynomial(poles((lo + hi) / 2)).dropFirst().map(\.re)
        var r = RecursiveGaussian(form: .cascade, b: [1 + a.reduce(0, +)], a: a)
        r.m = triggsSdika(a)
        return r
    }

    /// The matrix of `m`, by running the filters on a unit state past the end (input 0 there).
    static func triggsSdika(_ a: [Double]) -> [[Double]] {
        let k = a.count, tail = 4000
        let g = 1 + a.reduce(0, +)
        var m = [[Double]](repeating: [Double](repeating: 0, count: k), count: k)
        for j in 0..<k {
            var w = [Double](repeating: 0, count: k + tail)
            w[k - 1 - j] = 1
            for n in k..<(k + tail) { for i in 0..<k { w[n] -= a[i] * w[n - 1 - i] } }
            var y = [Double](repeating: 0, count: k + tail + k)
            for n in stride(from: k + tail - 1, through: k, by: -1) {
                var v = g * w[n]
                for i in 0..<k { v -= a[i] * y[n + 1 + i] }
                y[n] = v
            }
            for i in 0..<k { m[i][j] = y[k + i] }
        }
        return m
    }

    /// Deriche's fourth-order fit (1993): h(n) = sum of Re(A p^n) over two complex poles,
    /// normalised so that the whole kernel sums to 1; as causal + anticausal recursions.
    static func deriche(sigma: Double) -> RecursiveGaussian {
        let terms0: [(Complex, Complex)] = [
            (Complex(1.6800, -3.7350), Complex.polar(exp(-1.7830 / sigma), 0.6318 / sigma)),
            (Complex(-0.6803, 0.2598), Complex.polar(exp(-1.7230 / sigma), 1.9970 / sigma)),
        ]
        let h0 = terms0.reduce(0) { $0 + $1.0.re }
        let s = terms0.reduce(0) { $0 + ($1.0 / (Complex(1) - $1.1)).re }
        let total = 2 * s - h0
        // Each term as two conjugate one-pole filters with gains A/2, conj(A)/2.
        var singles: [(Complex, Complex)] = []
        for (A, p) in terms0 {
            let g = A / Complex(2 * total)
            singles.append((g, p)); singles.append((g.conjugate, p.conjugate))
        }
        let poles = singles.map(\.1)
        let d = polynomial(poles)
        var n = [Complex](repeating: Complex(0), count: 4)
        for (j, (g, _)) in singles.enumerated() {
            let others = polynomial(poles.enumerated().filter { $0.offset != j }.map(\.element))
            for i in 0..<others.count { n[i] = n[i] + g * others[i] }
        }
        let b = n.map(\.re), a = d.dropFirst().map(\.re)
        let h0n = h0 / total
        // Anticausal, n >= 1: H(z) - h(0): numerator N - h0 D, whose constant term is 0.
        let c = (1...4).map { i in (i < 4 ? b[i] : 0) - h0n * a[i - 1] }
        return RecursiveGaussian(form: .parallel, b: b, a: a, c: c)
    }

    static func method(_ name: String, sigma: Double) -> RecursiveGaussian? {
        switch name {
        case "recursive3": return vanVliet(sigma: sigma, order: 3)
        case "recursive4": return vanVliet(sigma: sigma, order: 4)
        case "deriche": return deriche(sigma: sigma)
        default: return nil
        }
    }

    static let group = 8

    private static func f(_ v: Double) -> String {
        let s = String(format: "%.12e", v)
        return s
    }

    /// `source`: GLSL (version line first) declaring `sourcePixel`, which the causal pass then
    /// reads instead of `lineInput`; it also stores the last input past the line's end (the
    /// output is one texel longer), where the anticausal pass (`endFromInput`) reads it.
    private static func head(rows: Bool, format: String, source: String? = nil) -> String {
        (source.map { $0.replacing("#version 310 es\n", with: "#version 310 es\nlayout(local_size_x = \(group)) in;\n") } ?? """
        #version 310 es
        precision highp float;
        precision highp int;
        layout(local_size_x = \(group)) in;

        """) + """
        uniform highp sampler2D lineInput;
        uniform highp sampler2D lineSource;
        layout(\(format), binding = 0) writeonly uniform highp image2D lineOutput;
        uniform int lineLength;
        uniform int lineCount;
        #define AT(n) \(rows ? "ivec2(n, line)" : "ivec2(line, n)")

        """
    }

    /// The causal pass: lineInput -> lineOutput.
    func causal(rows: Bool, format: String, source: String? = nil) -> String {
        let k = a.count
        let read = { (n: String) in source == nil ? "texelFetch(lineInput, AT(\(n)), 0)" : "sourcePixel(vec2(AT(\(n))) + 0.5)" }
        var s = RecursiveGaussian.head(rows: rows, format: format, source: source) + "void main() {\n    int line = int(gl_GlobalInvocationID.x);\n    if (line >= lineCount) return;\n"
        s += "    vec4 x0 = \(read("0"));\n"
        let steady = b.reduce(0, +) / (1 + a.reduce(0, +))
        for i in 1..<b.count { s += "    vec4 x\(i) = x0;\n" }
        for i in 1...k { s += "    vec4 y\(i) = x0 * \(RecursiveGaussian.f(steady));\n" }
        s += "    for (int n = 0; n < lineLength; n++) {\n        x0 = \(read("n"));\n"
        var terms = b.enumerated().map { "\(RecursiveGaussian.f($0.element)) * x\($0.offset)" }
        terms += a.enumerated().map { "\(RecursiveGaussian.f(-$0.element)) * y\($0.offset + 1)" }
        s += "        vec4 y = " + terms.joined(separator: " + ") + ";\n"
        s += "        imageStore(lineOutput, AT(n), y);\n"
        for i in stride(from: k, to: 1, by: -1) { s += "        y\(i) = y\(i - 1);\n" }
        s += "        y1 = y;\n"
        for i in stride(from: b.count - 1, to: 0, by: -1) { s += "        x\(i) = x\(i - 1);\n" }
        s += "    }\n"
        if source != nil { s += "    imageStore(lineOutput, AT(lineLength), x0);\n" }
        s += "}\n"
        return s
    }

    /// The anticausal pass: cascade, lineInput (the causal output) and lineSource (the input, for
    /// its last value) -> lineOutput; parallel, lineSource (the input) plus lineInput (the causal part).
    func anticausal(rows: Bool, format: String, endFromInput: Bool = false) -> String {
        let k = a.count
        var s = RecursiveGaussian.head(rows: rows, format: format) + "void main() {\n    int line = int(gl_GlobalInvocationID.x);\n    if (line >= lineCount) return;\n"
        s += endFromInput ? "    vec4 u = texelFetch(lineInput, AT(lineLength), 0);\n" : "    vec4 u = texelFetch(lineSource, AT(lineLength - 1), 0);\n"
        let ay = a.enumerated().map { "\(RecursiveGaussian.f(-$0.element)) * y\($0.offset + 1)" }
        switch form {
        case .cascade:
            for i in 1...k { s += "    vec4 w\(i) = texelFetch(lineInput, AT(max(lineLength - \(i), 0)), 0) - u;\n" }
            for j in 0..<k {
                s += "    vec4 y\(j + 1) = u + " + (0..<k).map { "\(RecursiveGaussian.f(m[j][$0])) * w\($0 + 1)" }.joined(separator: " + ") + ";\n"
            }
            s += "    for (int n = lineLength - 1; n >= 0; n--) {\n"
            s += "        vec4 y = \(RecursiveGaussian.f(b[0])) * texelFetch(lineInput, AT(n), 0) + " + ay.joined(separator: " + ") + ";\n"
            s += "        imageStore(lineOutput, AT(n), y);\n"
        case .parallel:
            let steady = c.reduce(0, +) / (1 + a.reduce(0, +))
            for i in 1...c.count { s += "    vec4 x\(i) = u;\n" }
            for i in 1...k { s += "    vec4 y\(i) = u * \(RecursiveGaussian.f(steady));\n" }
            s += "    for (int n = lineLength - 1; n >= 0; n--) {\n"
            s += "        vec4 y = " + (c.enumerated().map { "\(RecursiveGaussian.f($0.element)) * x\($0.offset + 1)" } + ay).joined(separator: " + ") + ";\n"
            s += "        imageStore(lineOutput, AT(n), y + texelFetch(lineInput, AT(n), 0));\n"
            for i in stride(from: c.count, to: 1, by: -1) { s += "        x\(i) = x\(i - 1);\n" }
            s += "        x1 = texelFetch(lineSource, AT(n), 0);\n"
        }
        for i in stride(from: k, to: 1, by: -1) { s += "        y\(i) = y\(i - 1);\n" }
        s += "        y1 = y;\n    }\n}\n"
        return s
    }
}
