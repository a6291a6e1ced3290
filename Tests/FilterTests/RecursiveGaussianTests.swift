import CEGL
import GPUEncodeKit
@testable import GPUEncodeRender
import XCTest

// Issue 15, tried and not kept (docs/PERFORMANCE.md, "O(1) Gaussians tried"): a recursive (IIR)
// Gaussian in GLES 3.1 compute shaders, one invocation per row and then per column running along
// the line, O(1) work per pixel whatever sigma. Accurate (about 1 code value from the exact
// sigma-8 Gaussian, borders included) but 3.1-4.8x slower than gaussianBlur's reduced pyramid on
// llvmpipe in the filter stage, so the product keeps the pyramid. This test keeps the prototype
// (coefficients, shaders, clamp-to-edge starts) runnable: it checks it against the exact Gaussian
// (its timings are in docs/PERFORMANCE.md, not in a test). In the real transcode it ran as the branch blur-o1's
// commits 3de594c and a42d254 (GPUENCODE_BLUR_METHOD=recursive3|deriche), removed in a0478c1
// after measuring; the cascade's anticausal start is computed in float32 here (see `causal`).

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

    /// van Vliet, Young & Verbeek's L2-optimal poles (for sigma 2), scaled so the cascade's
    /// variance is sigma^2 exactly: the sum over poles p of 2 p / (1 - p)^2.
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

    /// `m`, by running both filters on a unit state past the end (input 0 there).
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
        let terms: [(Complex, Complex)] = [
            (Complex(1.6800, -3.7350), Complex.polar(exp(-1.7830 / sigma), 0.6318 / sigma)),
            (Complex(-0.6803, 0.2598), Complex.polar(exp(-1.7230 / sigma), 1.9970 / sigma)),
        ]
        let h0 = terms.reduce(0) { $0 + $1.0.re }
        let total = 2 * terms.reduce(0) { $0 + ($1.0 / (Complex(1) - $1.1)).re } - h0
        // Each term as two conjugate one-pole filters with gains A / 2 and conj(A) / 2.
        var singles: [(Complex, Complex)] = []
        for (A, p) in terms {
            let g = A / Complex(2 * total)
            singles.append((g, p))
            singles.append((g.conjugate, p.conjugate))
        }
        let poles = singles.map(\.1)
        var n = [Complex](repeating: Complex(0), count: 4)
        for (j, (g, _)) in singles.enumerated() {
            let others = polynomial(poles.enumerated().filter { $0.offset != j }.map(\.element))
            for i in 0..<others.count { n[i] = n[i] + g * others[i] }
        }
        let b = n.map(\.re), a = polynomial(poles).dropFirst().map(\.re)
        // Anticausal, n >= 1: H(z) - h(0), numerator N - h0 D (its constant term is 0).
        let c = (1...4).map { i in (i < 4 ? b[i] : 0) - h0 / total * a[i - 1] }
        return RecursiveGaussian(form: .parallel, b: b, a: a, c: c)
    }

    /// Invocations per work group (llvmpipe: 8 was as fast as 16, 32 or 64, or faster).
    static let group = 8

    private static func f(_ v: Double) -> String { String(format: "%.12e", v) }

    private static func head(rows: Bool, format: String) -> String {
        """
        #version 310 es
        precision highp float;
        precision highp int;
        layout(local_size_x = \(group)) in;
        uniform highp sampler2D lineInput;
        uniform highp sampler2D lineSource;
        layout(\(format), binding = 0) writeonly uniform highp image2D lineOutput;
        layout(rgba32f, binding = 1) writeonly uniform highp image2D lineStart;
        uniform int lineLength;
        uniform int lineCount;
        #define AT(n) \(rows ? "ivec2(n, line)" : "ivec2(line, n)")

        """
    }

    /// The causal pass: lineInput -> lineOutput, started as if the first value went on forever.
    /// The cascade's also stores the anticausal start, y[N + j] at j, in lineStart (RGBA32F, a
    /// texel per order a line): computed here from the causal states in float32. why: computed by
    /// the anticausal pass from the stored half floats, the matrix (rows of |m| summing to 25.5 at
    /// order 3, 172 at order 4, sigma 8) magnified their rounding to 1.6 and 3.0 code values at the
    /// right and bottom borders (in numpy: 1.1 and 5.3 on a step); stored as half floats, the start
    /// itself excites the recursion's own modes (2.1 and 11).
    func causal(rows: Bool, format: String) -> String {
        let k = a.count
        var s = RecursiveGaussian.head(rows: rows, format: format) + "void main() {\n    int line = int(gl_GlobalInvocationID.x);\n    if (line >= lineCount) return;\n"
        s += "    vec4 x0 = texelFetch(lineInput, AT(0), 0);\n"
        let steady = b.reduce(0, +) / (1 + a.reduce(0, +))
        for i in 1..<b.count { s += "    vec4 x\(i) = x0;\n" }
        for i in 1...k { s += "    vec4 y\(i) = x0 * \(RecursiveGaussian.f(steady));\n" }
        s += "    for (int n = 0; n < lineLength; n++) {\n        x0 = texelFetch(lineInput, AT(n), 0);\n"
        let terms = b.enumerated().map { "\(RecursiveGaussian.f($0.element)) * x\($0.offset)" }
            + a.enumerated().map { "\(RecursiveGaussian.f(-$0.element)) * y\($0.offset + 1)" }
        s += "        vec4 y = " + terms.joined(separator: " + ") + ";\n"
        s += "        imageStore(lineOutput, AT(n), y);\n"
        for i in stride(from: k, to: 1, by: -1) { s += "        y\(i) = y\(i - 1);\n" }
        s += "        y1 = y;\n"
        for i in stride(from: b.count - 1, to: 0, by: -1) { s += "        x\(i) = x\(i - 1);\n" }
        s += "    }\n"
        if form == .cascade {
            // x0: the last input (u); y1...yk: w[N - 1], w[N - 2], ...
            for j in 0..<k {
                s += "    imageStore(lineStart, AT(\(j)), x0 + " + (0..<k).map { "\(RecursiveGaussian.f(m[j][$0])) * (y\($0 + 1) - x0)" }.joined(separator: " + ") + ");\n"
            }
        }
        return s + "}\n"
    }

    /// The anticausal pass: cascade, lineInput (the causal output) from the start in lineSource ->
    /// lineOutput; parallel, lineSource (the input) plus lineInput (the causal part).
    func anticausal(rows: Bool, format: String) -> String {
        let k = a.count
        var s = RecursiveGaussian.head(rows: rows, format: format) + "void main() {\n    int line = int(gl_GlobalInvocationID.x);\n    if (line >= lineCount) return;\n"
        let ay = a.enumerated().map { "\(RecursiveGaussian.f(-$0.element)) * y\($0.offset + 1)" }
        switch form {
        case .cascade:
            for j in 0..<k { s += "    vec4 y\(j + 1) = texelFetch(lineSource, AT(\(j)), 0);\n" }
            s += "    for (int n = lineLength - 1; n >= 0; n--) {\n"
            s += "        vec4 y = \(RecursiveGaussian.f(b[0])) * texelFetch(lineInput, AT(n), 0) + " + ay.joined(separator: " + ") + ";\n"
            s += "        imageStore(lineOutput, AT(n), y);\n"
        case .parallel:
            s += "    vec4 u = texelFetch(lineSource, AT(lineLength - 1), 0);\n"
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
        return s + "        y1 = y;\n    }\n}\n"
    }
}

/// The four line passes on raw GLES 3.1: an RGBA8 picture in, RGBA16F between, RGBA8 out.
final class RecursiveGaussianRunner {
    let width: Int, height: Int
    private var textures: [GLuint] = []
    private var programs: [(program: ShaderProgram, input: Int, source: Int, output: Int, format: GLenum, count: Int, length: Int, start: Int?)] = []
    private var fbo: GLuint = 0

    init(_ g: RecursiveGaussian, width: Int, height: Int) throws {
        self.width = width
        self.height = height
        // 0: in (RGBA8), 1: causal rows, 2: rows, 3: causal columns (RGBA16F), 4: out (RGBA8);
        // 5, 6: the cascade's anticausal starts for rows and columns (RGBA32F).
        let k = g.a.count
        for (format, w, h) in [(GL_RGBA8, width, height), (GL_RGBA16F, width, height), (GL_RGBA16F, width, height),
                               (GL_RGBA16F, width, height), (GL_RGBA8, width, height), (GL_RGBA32F, k, height), (GL_RGBA32F, width, k)] {
            var t: GLuint = 0
            glGenTextures(1, &t)
            glBindTexture(GLenum(GL_TEXTURE_2D), t)
            glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(format), GLsizei(w), GLsizei(h))
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
            textures.append(t)
        }
        let h16 = "rgba16f"
        let cascade = g.form == .cascade
        let plan: [(String, Int, Int, Int, GLenum, Int, Int, Int?)] = [
            (g.causal(rows: true, format: h16), 0, 0, 1, GLenum(GL_RGBA16F), height, width, cascade ? 5 : nil),
            (g.anticausal(rows: true, format: h16), 1, cascade ? 5 : 0, 2, GLenum(GL_RGBA16F), height, width, nil),
            (g.causal(rows: false, format: h16), 2, 2, 3, GLenum(GL_RGBA16F), width, height, cascade ? 6 : nil),
            (g.anticausal(rows: false, format: "rgba8"), 3, cascade ? 6 : 2, 4, GLenum(GL_RGBA8), width, height, nil),
        ]
        for (text, input, source, output, format, count, length, start) in plan {
            // The product's compile and link (a failure throws with the driver's log).
            let program = try ShaderProgram(compute: text, label: "recursive Gaussian line pass")
            program.use()
            glUniform1i(program.location("lineInput"), 0)
            glUniform1i(program.location("lineSource"), 1)
            glUniform1i(program.location("lineLength"), GLint(length))
            glUniform1i(program.location("lineCount"), GLint(count))
            programs.append((program, input, source, output, format, count, length, start))
        }
        glGenFramebuffers(1, &fbo)
    }

    deinit {
        glDeleteTextures(GLsizei(textures.count), textures)
        glDeleteFramebuffers(1, &fbo)
    }

    func upload(_ image: RGBAImage) {
        glBindTexture(GLenum(GL_TEXTURE_2D), textures[0])
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), image.pixels)
    }

    func run() {
        for p in programs {
            p.program.use()
            glActiveTexture(GLenum(GL_TEXTURE0))
            glBindTexture(GLenum(GL_TEXTURE_2D), textures[p.input])
            glActiveTexture(GLenum(GL_TEXTURE1))
            glBindTexture(GLenum(GL_TEXTURE_2D), textures[p.source])
            glBindImageTexture(0, textures[p.output], 0, GLboolean(GL_FALSE), 0, GLenum(GL_WRITE_ONLY), p.format)
            if let start = p.start { glBindImageTexture(1, textures[start], 0, GLboolean(GL_FALSE), 0, GLenum(GL_WRITE_ONLY), GLenum(GL_RGBA32F)) }
            glDispatchCompute(GLuint((p.count + RecursiveGaussian.group - 1) / RecursiveGaussian.group), 1, 1)
            glMemoryBarrier(GLbitfield(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_FRAMEBUFFER_BARRIER_BIT))
        }
    }

    func read() -> RGBAImage {
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fbo)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), textures[4], 0)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixels)
        return RGBAImage(width: width, height: height, pixels: pixels)
    }
}

final class RecursiveGaussianTests: FilterTestCase {
    /// Hard edges that reach the borders, gradients and texture (as BlurTests' reduced Gaussian test).
    func picture(_ width: Int, _ height: Int) -> RGBAImage {
        RGBAImage(width: width, height: height) { x, y in
            let edge: UInt8 = ((x / 13) + (y / 11)) % 2 == 0 ? 235 : 16
            let texture = 128 + 60 * sin(Double(x) / 5) * cos(Double(y) / 7)
            return (edge, UInt8(x * 255 / (width - 1)), UInt8(texture), 255)
        }
    }

    /// The prototype's two forms against the exact sigma-8 Gaussian (float64, clamp-to-edge),
    /// everywhere, borders included: van Vliet-Young-Verbeek order 3 and 4 (numpy, bench/blur-o1-accuracy.py:
    /// 0.94 and 0.83 code values at most in float64) and Deriche order 4 (0.47).
    func testRecursiveGaussianPrototypeIsWithin3CodeValuesOfExact() throws {
        for (width, height) in [(160, 96), (121, 77)] {
            let image = picture(width, height)
            let exact = separableExact(Picture(image), gaussianKernel(sigma: 8))
            for (name, g) in [("vVYV order 3", RecursiveGaussian.vanVliet(sigma: 8, order: 3)), ("vVYV order 4", RecursiveGaussian.vanVliet(sigma: 8, order: 4)),
                              ("Deriche order 4", RecursiveGaussian.deriche(sigma: 8))] {
                let runner = try RecursiveGaussianRunner(g, width: width, height: height)
                runner.upload(image)
                runner.run()
                let out = runner.read()
                let (worst, border) = blurError(out, exact, margin: 24)
                print("recursive Gaussian \(name) \(width)x\(height) sigma 8: worst \(String(format: "%.2f", worst)), within 24 px of a border \(String(format: "%.2f", border)) code values")
                assertMatches(out, tolerance: 3, "\(name) \(width)x\(height)") { x, y in exact[x, y] }
            }
        }
    }
}
