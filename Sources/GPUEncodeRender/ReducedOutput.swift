import CEGL

// A chain that ends in a reduced picture (a wide Gaussian computed small, whose last pass would only
// scale it back up): the NV12 conversion reads the full-size pixels from the reduced picture itself.
// why: on software GL every full-size pass costs about as much as the whole reduced blur; this
// one wrote a full-size texture only for the conversion to read it back pixel by pixel.

extension FrameRenderer {
    /// `nv12FromRGBA` with each pixel read bilinearly from the reduced picture at the position the
    /// filter's upsample pass would read it (`ChainRenderer.reducedOutput`): the same values, unrounded.
    static let nv12FromReduced = nv12Head + reducedUniforms + lightGLSL
        + rgbaReader(fetch: "texture(rgbaTex, ((vec2(p) + 0.5) / reducedDivisor + reducedMargin) / reducedSize)") + nv12Block + nv12Main

    /// Where the reduced picture's pixels are (`ChainRenderer.setReducedUniforms`).
    static let reducedUniforms = "uniform float reducedDivisor;\nuniform float reducedMargin;\nuniform vec2 reducedSize;\n"
}

extension FrameRenderer {
    /// `nv12FromReduced` for a picture reduced 4x: a 4x2 block's 7x4 neighbourhood lies within 3x3
    /// reduced texels at fixed offsets and weights (1/8, 3/8, 5/8, 7/8), so a block takes 9 texel
    /// fetches and the interpolation in arithmetic instead of 28 bilinear fetches. At the borders,
    /// the neighbourhood's pixels past the picture take the edge pixel's value, as the clamped reads
    /// of `nv12FromRGBA` do; by selects, not branches (llvmpipe runs both sides of a branch).
    static let nv12FromReduced4: String = {
        var body: [String] = []
        for b in 0..<3 { for a in 0..<3 { body.append("vec3 t\(a)\(b) = texelFetch(rgbaTex, base + ivec2(\(a), \(b)), 0).rgb;") } }
        // Row r of the neighbourhood (pixel row 2m - 1 + r) in reduced rows and weights, for even m / odd m.
        let rows: [((Int, Double), (Int, Double))] = [((0, 0.375), (0, 0.875)), ((0, 0.625), (1, 0.125)), ((0, 0.875), (1, 0.375)), ((1, 0.125), (1, 0.625))]
        for (r, (even, odd)) in rows.enumerated() {
            for a in 0..<3 {
                body.append("vec3 r\(r)\(a) = odd ? mix(t\(a)\(odd.0), t\(a)\(odd.0 + 1), \(odd.1)) : mix(t\(a)\(even.0), t\(a)\(even.0 + 1), \(even.1));")
            }
        }
        // Rows past the top and bottom: the edge row. (Rows 1 and 2 are always inside: the height is even.)
        for a in 0..<3 { body.append("r0\(a) = m == 0 ? r1\(a) : r0\(a);") }
        for a in 0..<3 { body.append("r3\(a) = 2 * m + 2 > rgbaMax.y ? r2\(a) : r3\(a);") }
        // Pixel column 4q - 2 + k in reduced columns and weights.
        let columns: [(Int, Double)] = [(0, 0.125), (0, 0.375), (0, 0.625), (0, 0.875), (1, 0.125), (1, 0.375), (1, 0.625)]
        for r in 0..<4 {
            for (k, (a, f)) in columns.enumerated() {
                body.append("vec3 p\(r)\(k) = mix(r\(r)\(a), r\(r)\(a + 1), \(f));")
            }
            // Columns past the left edge (q = 0: columns 0 and 1) and the right one: the edge column.
            body.append("p\(r)1 = q == 0 ? p\(r)2 : p\(r)1;")
            body.append("p\(r)0 = q == 0 ? p\(r)2 : p\(r)0;")
            for k in 3..<7 { body.append("p\(r)\(k) = 4 * q - 2 + \(k) > rgbaMax.x ? p\(r)\(k - 1) : p\(r)\(k);") }
            for k in 0..<7 { body.append("p\(r)\(k) = encoded(p\(r)\(k));") }
            if r == 1 || r == 2 {
                for k in 0..<7 { body.append("inner[\(7 * (r - 1) + k)] = p\(r)\(k);") }
            } else {
                let o = r == 0 ? 0 : 2
                body.append("outer[\(o)] = " + (0..<5).map { "chromaH[\($0)] * p\(r)\($0)" }.joined(separator: " + ") + ";")
                body.append("outer[\(o + 1)] = " + (0..<5).map { "chromaH[\($0)] * p\(r)\($0 + 2)" }.joined(separator: " + ") + ";")
            }
        }
        return nv12Head + reducedUniforms + lightGLSL + nv12Block + """
        vec3 encoded(vec3 c) {
        #ifdef LINEAR_LIGHT
            c = fromLinear(c);
        #endif
            return c;
        }
        void shadeBlock() {
            int q = blockCoord().x;
            int m = blockCoord().y;
            vec3 inner[14];
            vec3 outer[4];
            ivec2 base = ivec2(q, m / 2) + ivec2(int(reducedMargin)) - 1;
            bool odd = (m & 1) == 1;

        """ + body.map { "    " + $0 }.joined(separator: "\n") + """

            writeBlock(inner, outer);
        }

        """ + blockEntry
    }()
}

extension ChainRenderer {
    /// Sets `nv12FromReduced`'s uniforms on `program` (in use).
    func setReducedUniforms(_ program: ShaderProgram) {
        guard let r = reducedOutput else { return }
        program.set("reducedDivisor", Float(r.divisor))
        program.set("reducedMargin", Float(r.margin))
        program.set("reducedSize", Float(output.width), Float(output.height))
    }
}
