// The GLSL of the plane blur's passes (PlaneBlur.swift), generated for one kernel with its taps
// written out as constants.

enum PlaneBlurShaders {
    static let head = """
    #version 300 es
    precision highp float;
    precision highp int;

    """

    /// Pass 1 or 2: each packed texel's four columns of `planes` (one output each) blurred down the
    /// column, centred on source row `rowStep` x (the fragment's row - 1), rows past the edges
    /// clamped as the reference's blur clamps. Taps are constants in the code (why: llvmpipe runs
    /// fetches over uniform arrays at several times the cost of the same fetches unrolled, as
    /// GaussianBlurFilter.unrolled says), one texelFetch a row. why not two rows a linearly
    /// filtered fetch: on llvmpipe 25 filtered fetches cost more than 49 texelFetches (1080p filter
    /// stage 32-35 ms a frame against 21-25).
    static func columns(_ kernel: PlaneBlurKernel, planes: [String], rowStep: Int) -> String {
        var glsl = head + planes.map { "uniform highp sampler2D \($0);\n" }.joined() + "uniform vec2 planeSize;\n"
        glsl += planes.indices.map { "layout(location = \($0)) out vec4 column\($0);\n" }.joined()
        glsl += """
        void main() {
            // Grid row r is source row (r - 1) x rowStep: one row above the picture for the cubic.
            ivec2 p = ivec2(int(gl_FragCoord.x), (int(gl_FragCoord.y) - 1) * \(rowStep));
            int last = int(planeSize.y) - 1;

        """
        func row(_ plane: String, _ d: Int) -> String { "texelFetch(\(plane), ivec2(p.x, clamp(p.y + (\(d)), 0, last)), 0)" }
        for (i, plane) in planes.enumerated() {
            glsl += "    vec4 s\(i) = \(row(plane, 0)) * \(literal(Float(kernel.half[0])));\n"
            for d in 1...kernel.radius {
                glsl += "    s\(i) += (\(row(plane, d)) + \(row(plane, -d))) * \(literal(Float(kernel.half[d])));\n"
            }
            glsl += "    column\(i) = s\(i);\n"
        }
        return glsl + "}\n"
    }

    /// Pass 3: the columns blurred across at every 4th luma column (sample 0 of each packed texel)
    /// and every 2nd chroma column (sample 0 or 2), into one Y'CbCr grid texel. A texel past either
    /// edge is the edge sample repeated, as the reference's clamped fetches read. Taps unrolled.
    static func rows(luma: PlaneBlurKernel, chroma: PlaneBlurKernel) -> String {
        let l = luma.texels(maxPhase: 0), c = chroma.texels(maxPhase: 2)
        let lw = luma.texelWeights(phase: 0, maxPhase: 0)
        let even = chroma.texelWeights(phase: 0, maxPhase: 2), odd = chroma.texelWeights(phase: 2, maxPhase: 2)
        func vec4(_ w: [Float], _ n: Int) -> String { "vec4(" + w[(4 * n)..<(4 * n + 4)].map(literal).joined(separator: ", ") + ")" }
        var glsl = head + """
        uniform highp sampler2D lumaColumns;
        uniform highp sampler2D cbColumns;
        uniform highp sampler2D crColumns;
        uniform ivec2 lastTexel;
        out vec4 gridValue;
        #define ACROSS(tex, t, row, last, v) { int t_ = (t); v = texelFetch(tex, ivec2(clamp(t_, 0, last), row), 0); v = t_ < 0 ? vec4(v.x) : t_ > last ? vec4(v.w) : v; }
        void main() {
            ivec2 g = ivec2(gl_FragCoord.xy);
            float y = 0.0;
            vec4 v;

        """
        for (n, k) in l.enumerated() {
            glsl += "    ACROSS(lumaColumns, g.x + (\(k)), g.y, lastTexel.x, v) y += dot(v, \(vec4(lw, n)));\n"
        }
        glsl += """
            int b = g.x >> 1;
            float odd = float(g.x & 1);
            float cb = 0.0;
            float cr = 0.0;
            vec4 w;

        """
        for (n, k) in c.enumerated() {
            glsl += "    w = mix(\(vec4(even, n)), \(vec4(odd, n)), odd);\n"
            glsl += "    ACROSS(cbColumns, b + (\(k)), g.y, lastTexel.y, v) cb += dot(v, w);\n"
            glsl += "    ACROSS(crColumns, b + (\(k)), g.y, lastTexel.y, v) cr += dot(v, w);\n"
        }
        return glsl + "    gridValue = vec4(y, cb, cr, 1.0);\n}\n"
    }

    /// A float as a GLSL literal (always with a decimal point or exponent).
    static func literal(_ v: Float) -> String {
        let text = "\(v)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    /// Pass 4: a 4x2 block's eight Y and two CbCr interpolated from the grid texels around it (grid
    /// point (j, i) is luma pixel (4j, 4i) and chroma sample (2j, 2i), which 4:2:0 with left-sited
    /// chroma puts at luma (4j, 4i + 0.5); texture row i + 1): bilinear across, Catmull-Rom down
    /// (four grid rows). why: testsrc2's hard horizontal Cr edges blurred with sigma 4 chroma
    /// samples are 3.3 codes from their bilinear interpolation at h = 2, 1.8 from the cubic one.
    /// Each is converted to R'G'B' (not clamped: see PlaneBlur.swift) and written by the reference's
    /// NV12 writer (`writeSamples`), which takes them to the output's Y'CbCr. A pixel's R'G'B' takes
    /// Cb and Cr at its own grid row (half a pixel above their place, a sigma-4 blur moved by a
    /// quarter sample): where the source's matrix and range are the output's (BT.709 limited) the
    /// output's Y does not depend on them.
    static let nv12 = head + """
    uniform highp sampler2D gridTex;
    uniform mat3 yuvToRgb;
    uniform vec3 yuvOffset;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;

    """ + FrameRenderer.nv12Block + """
    vec3 rgbOf(vec4 g) { return yuvToRgb * g.xyz + yuvOffset; }
    vec4 cubic(float t) {
        float t2 = t * t;
        float t3 = t2 * t;
        return 0.5 * vec4(-t3 + 2.0 * t2 - t, 3.0 * t3 - 5.0 * t2 + 2.0, -3.0 * t3 + 4.0 * t2 + t, t3 - t2);
    }
    vec4 down(vec4 a, vec4 b, vec4 c, vec4 d, vec4 w) { return w.x * a + w.y * b + w.z * c + w.w * d; }
    void shadeBlock() {
        ivec2 b = blockCoord();
        int i = (b.y >> 1) + 1;
        float f = (b.y & 1) == 1 ? 0.5 : 0.0;
        vec4 a0 = texelFetch(gridTex, ivec2(b.x, i - 1), 0);
        vec4 a1 = texelFetch(gridTex, ivec2(b.x, i), 0);
        vec4 a2 = texelFetch(gridTex, ivec2(b.x, i + 1), 0);
        vec4 a3 = texelFetch(gridTex, ivec2(b.x, i + 2), 0);
        vec4 b0 = texelFetch(gridTex, ivec2(b.x + 1, i - 1), 0);
        vec4 b1 = texelFetch(gridTex, ivec2(b.x + 1, i), 0);
        vec4 b2 = texelFetch(gridTex, ivec2(b.x + 1, i + 1), 0);
        vec4 b3 = texelFetch(gridTex, ivec2(b.x + 1, i + 2), 0);
        vec4 we = cubic(f), wo = cubic(f + 0.25), wc = cubic(f + 0.125);
        vec4 e0 = down(a0, a1, a2, a3, we);
        vec4 e1 = down(b0, b1, b2, b3, we);
        vec4 o0 = down(a0, a1, a2, a3, wo);
        vec4 o1 = down(b0, b1, b2, b3, wo);
        vec3 z = vec3(0.0);
        vec3 inner[14] = vec3[14](z, z, rgbOf(e0), rgbOf(mix(e0, e1, 0.25)), rgbOf(mix(e0, e1, 0.5)), rgbOf(mix(e0, e1, 0.75)), z,
                                  z, z, rgbOf(o0), rgbOf(mix(o0, o1, 0.25)), rgbOf(mix(o0, o1, 0.5)), rgbOf(mix(o0, o1, 0.75)), z);
        // The chroma samples' rows: Cb and Cr on grid row fraction f, Y an eighth of a step below.
        float l0 = dot(vec4(a0.x, a1.x, a2.x, a3.x), wc);
        float l1 = dot(vec4(b0.x, b1.x, b2.x, b3.x), wc);
        writeSamples(inner, rgbOf(vec4(l0, e0.yzw)), rgbOf(vec4(mix(l0, l1, 0.5), mix(e0, e1, 0.5).yzw)));
    }

    """ + FrameRenderer.blockEntry
}
