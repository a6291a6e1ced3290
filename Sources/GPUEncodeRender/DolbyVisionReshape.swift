import CEGL
import GPUEncodeCore

// Dolby Vision's reference processing on the GPU, as libplacebo applies an RPU
// (`pl_shader_dovi_reshape` and the Dolby Vision branch of its colour decoding), as one generated
// GLSL function `vec3 dolbyVisionLinear(vec3 yuv)` before tone mapping:
//
// 1. Reshaping, per component, on the base layer's codes normalised to 0...1 (code / (2^bits − 1)):
//    the piece whose pivot range holds the component's own value maps it, either by a polynomial
//    c0 + c1·x + c2·x² of that value, or by MMR (multivariate multiple regression) over all three
//    components: constant + Σ over orders k ≤ 3 of the coefficients of y^k, u^k, v^k, (yu)^k,
//    (yv)^k, (uv)^k, (yuv)^k. The result is clamped to the first and last pivots.
// 2. The RPU's ycc_to_rgb matrix and offset: rgb' = M · (reshaped − offset), PQ-coded R'G'B' (for
//    profile 5, IPTPQc2, the matrix takes I, P, T to L'M'S'), clamped to PQ's 0...1.
// 3. The PQ EOTF, then the RPU's rgb_to_lms and LMS to linear BT.2020 RGB through the
//    Hunt-Pointer-Estevez LMS without crosstalk (what rgb_to_lms is defined against).
//
// The result is linear BT.2020 light (1.0 = 10000 nits), which the tone mapping then reads as a PQ
// source mastered at the RPU's source_max_pq (`DolbyVisionRPU.colorSpace`). RPUs change from frame
// to frame, so everything the RPU says is a uniform (`set(_:on:)` per frame); the shader itself
// depends on nothing but the capacity below.

/// The GLSL of Dolby Vision reshaping and colour transform, and its per-frame uniforms.
public struct DolbyVisionReshape: Sendable {
    /// Bits per sample of the source textures (`sampleScale` normalises codes by 255·2^(bits − 8)).
    public var sourceBits: Int

    public init(sourceBits: Int) {
        self.sourceBits = sourceBits
    }

    /// Pieces per component (FFmpeg's AV_DOVI_MAX_PIECES).
    package static let maxPieces = 8
    /// MMR orders (a pair of vec4 of coefficients each) one RPU may use over all its pieces: four
    /// order-3 pieces. Streams seen use one order-3 piece per chroma component; an RPU needing more
    /// is refused (`fits`) rather than applied in part.
    package static let mmrCapacity = 12

    /// Whether `rpu` fits the shader's uniforms.
    package static func fits(_ rpu: DolbyVisionRPU) -> Bool {
        rpu.mmrOrders <= mmrCapacity && rpu.curves.count == 3 && rpu.curves.allSatisfy { $0.pieces.count <= maxPieces && $0.pivots.count == $0.pieces.count + 1 }
            && rpu.yccToRGB.count == 9 && rpu.yccOffset.count == 3 && rpu.rgbToLMS.count == 9
    }

    /// Needs `pqEOTF` (SourceColorShader's helpers) before it.
    package var glsl: String {
        """
        // Dolby Vision RPU (DolbyVisionReshape.swift), set per frame.
        uniform float dvInputScale;
        uniform vec4 dvPivots[6];
        uniform vec4 dvPieces[\(3 * DolbyVisionReshape.maxPieces)];
        uniform vec4 dvMMR[\(2 * DolbyVisionReshape.mmrCapacity)];
        uniform vec3 dvLow;
        uniform vec3 dvHigh;
        uniform mat3 dvYccToRgb;
        uniform vec3 dvYccOffset;
        uniform mat3 dvLMSToBT2020;
        // Component c's value mapped by the piece its pivots pick: the number of inner pivots (1 to
        // 7, two vec4 a component, those past the last piece set above any value) at or below it.
        // Pieces: polynomial (c0, c1, c2, 0), MMR (constant, first dvMMR index, 0, orders).
        float dvReshape(int c, vec3 sig) {
            float s = sig[c];
            int piece = int(dot(step(dvPivots[2 * c], vec4(s)) + step(dvPivots[2 * c + 1], vec4(s)), vec4(1.0)));
            vec4 p = dvPieces[\(DolbyVisionReshape.maxPieces) * c + piece];
            if (p.w == 0.0) {
                s = p.x + s * (p.y + s * p.z);
            } else {
                int m = int(p.y);
                vec4 cross = vec4(sig.xxy * sig.yzz, sig.x * sig.y * sig.z);
                vec3 sk = sig;
                vec4 ck = cross;
                s = p.x;
                for (int k = 0; k < 3; k++) {
                    if (float(k) >= p.w) break;
                    s += dot(dvMMR[m + 2 * k].xyz, sk) + dot(dvMMR[m + 2 * k + 1], ck);
                    sk *= sig;
                    ck *= cross;
                }
            }
            return clamp(s, dvLow[c], dvHigh[c]);
        }
        // Linear BT.2020 light, 1.0 = 10000 nits.
        vec3 dolbyVisionLinear(vec3 yuv) {
            vec3 sig = clamp(yuv * dvInputScale, 0.0, 1.0);
            vec3 shaped = vec3(dvReshape(0, sig), dvReshape(1, sig), dvReshape(2, sig));
            // (PQ is defined on 0...1: past about 1.7 its EOTF's denominator turns negative.)
            return max(dvLMSToBT2020 * pqEOTF(clamp(dvYccToRgb * (shaped - dvYccOffset), 0.0, 1.0)), 0.0);
        }

        """
    }

    /// The uniform values for `rpu` (which `fits`): names and flat float arrays, in the order
    /// `set` uploads them.
    package func uniforms(_ rpu: DolbyVisionRPU) -> (scale: Float, pivots: [Float], pieces: [Float], mmr: [Float], low: [Float], high: [Float],
                                                      yccToRGB: [Float], offset: [Float], lmsToBT2020: [Float]) {
        let n = DolbyVisionReshape.maxPieces
        var pivots = [Float](repeating: 1e9, count: 3 * 8), pieces = [Float](repeating: 0, count: 3 * n * 4)
        var mmr = [Float](repeating: 0, count: 2 * DolbyVisionReshape.mmrCapacity * 4)
        var next = 0
        for (c, curve) in rpu.curves.enumerated() {
            // Pivots 1 ... count − 2 choose pieces; the first and last are the clamp's bounds only.
            for i in 1..<max(curve.pivots.count - 1, 1) { pivots[8 * c + i - 1] = Float(curve.pivots[i]) }
            for (i, piece) in curve.pieces.enumerated() {
                let at = 4 * (n * c + i)
                switch piece {
                case .polynomial(let k):
                    for j in 0..<min(k.count, 3) { pieces[at + j] = Float(k[j]) }
                case .mmr(let constant, let orders):
                    pieces[at] = Float(constant)
                    pieces[at + 1] = Float(2 * next)
                    pieces[at + 3] = Float(orders.count)
                    for k in orders {
                        // (y, u, v, unused), (yu, yv, uv, yuv)
                        for j in 0..<3 { mmr[8 * next + j] = Float(k[j]) }
                        for j in 0..<4 { mmr[8 * next + 4 + j] = Float(k[3 + j]) }
                        next += 1
                    }
                }
            }
        }
        let base = (1 << rpu.baseBitDepth) - 1
        let scale = Float(Double(255 << (sourceBits - 8)) / Double(base))
        let lms = SourceColorShader.multiply(DolbyVisionReshape.lmsToBT2020, [Array(rpu.rgbToLMS[0..<3]), Array(rpu.rgbToLMS[3..<6]), Array(rpu.rgbToLMS[6..<9])])
        return (scale, pivots, pieces, mmr, rpu.curves.map { Float($0.pivots.first ?? 0) }, rpu.curves.map { Float($0.pivots.last ?? 1) },
                rpu.yccToRGB.map(Float.init), rpu.yccOffset.map(Float.init), lms.flatMap { $0 }.map(Float.init))
    }

    /// Sets `rpu`'s uniforms on `program` (which uses them or ignores them).
    func set(_ rpu: DolbyVisionRPU, on program: ShaderProgram) {
        let u = uniforms(rpu)
        program.use()
        program.set("dvInputScale", u.scale)
        glUniform4fv(program.location("dvPivots"), 6, u.pivots)
        glUniform4fv(program.location("dvPieces"), GLsizei(3 * DolbyVisionReshape.maxPieces), u.pieces)
        glUniform4fv(program.location("dvMMR"), GLsizei(2 * DolbyVisionReshape.mmrCapacity), u.mmr)
        program.set("dvLow", u.low[0], u.low[1], u.low[2])
        program.set("dvHigh", u.high[0], u.high[1], u.high[2])
        program.setMatrix("dvYccToRgb", rows: u.yccToRGB)
        program.set("dvYccOffset", u.offset[0], u.offset[1], u.offset[2])
        program.setMatrix("dvLMSToBT2020", rows: u.lmsToBT2020)
    }

    /// LMS (Hunt-Pointer-Estevez, normalised to D65, no crosstalk) to linear BT.2020 RGB: the
    /// inverse of HPE · BT.2020's RGB-to-XYZ. (libplacebo's `pl_ipt_lms2rgb`; an iPhone RPU's
    /// rgb_to_lms is this matrix's inverse to 4 decimals, so its product is nearly the identity.)
    static let lmsToBT2020: [[Double]] = {
        let hpe = [[0.4002, 0.7076, -0.0808], [-0.2263, 1.1653, 0.0457], [0, 0, 0.9182]]
        let toXYZ = SourceColorShader.rgbToXYZ(r: (0.708, 0.292), g: (0.170, 0.797), b: (0.131, 0.046))
        return SourceColorShader.invert(SourceColorShader.multiply(hpe, toXYZ))
    }()
}
