// GLSL of the deinterlacer (Deinterlacer.swift): one pass per plane, bwdif's arithmetic.

enum DeinterlaceShaders {
    /// One plane of one output frame, written where the renderer reads its source. The method is
    /// FFmpeg's bwdif (Thomas Mundt, 2016): yadif's frame handling and spatial-temporal clamp around
    /// a w3fdif-style interpolation (BBC PH-2071's Weston 3-field coefficients: low frequencies
    /// from the current frame's other field, high frequencies from the missing field in the
    /// previous and next frames), and a 4-tap spatial cubic where the motion is too large to trust
    /// the temporal neighbours. Written from the algorithm with the same integer arithmetic (8-bit
    /// samples, 13-bit coefficients, arithmetic shifts), so it follows bwdif sample for sample.
    ///
    /// Every tap is in the same column, so the pass works on whatever layout the renderer keeps
    /// its source in: one sample per R8 texel, or four horizontally adjacent samples per RGBA8
    /// texel (each component is one column). The integer arithmetic holds for samples of up to 16
    /// bits (`sampleMax` 65535: the largest sum is under 2^30). Uniforms:
    /// - `interpolate`: rows where `(y ^ interpolate) & 1 == 1` are made, the others copied from
    ///   the current frame (the field being shown);
    /// - `late`: 1 when the made field lies between the previous and the current frame (the first
    ///   field shown: its other field is the previous frame's second), 0 when it lies between the
    ///   current and the next frame (bwdif's `parity ^ tff`);
    /// - `method`: 0 copies the current frame, 1 interpolates spatially only (bwdif's first field
    ///   of the first frame and second field of the last), 2 is the full filter.
    /// `integer`: the planes are R16UI/RGBA16UI (10- to 16-bit sources, code values as they are),
    /// read and written as unsigned integers; otherwise UNORM8 (1.0 = 255).
    static func fragment(integer: Bool) -> String {
        let (sampler, output) = integer ? ("usampler2D", "uvec4") : ("sampler2D", "vec4")
        let read = integer ? "ivec4(texelFetch(t, ivec2(x, clamp(y, 0, height - 1)), 0))"
                           : "ivec4(round(texelFetch(t, ivec2(x, clamp(y, 0, height - 1)), 0) * float(sampleMax)))"
        let write = integer ? "uvec4(v)" : "vec4(v) / float(sampleMax)"
        return """
        #version 300 es
        precision highp float;
        precision highp int;
        uniform highp \(sampler) prevTex;
        uniform highp \(sampler) curTex;
        uniform highp \(sampler) nextTex;
        uniform int interpolate;
        uniform int late;
        uniform int method;
        uniform int height;
        // The largest code value of the source samples (255 for 8-bit, 1023 for 10-bit): bwdif's clip_max.
        uniform int sampleMax;
        out \(output) result;

        ivec4 fetch(highp \(sampler) t, int x, int y) {
            return \(read);
        }
        \(output) store(ivec4 v) { return \(write); }

        // bwdif's coefficients (BBC PH-2071; the spatial pair tuned to match its sharpness), /8192.
        const int lf0 = 4309, lf1 = 213;
        const int hf0 = 5570, hf1 = 3801, hf2 = 1016;
        const int sp0 = 5077, sp1 = 981;

        void main() {
            int x = int(gl_FragCoord.x);
            int y = int(gl_FragCoord.y);
            ivec4 here = fetch(curTex, x, y);
            if (method == 0 || ((y ^ interpolate) & 1) == 0) {
                result = store(here);
                return;
            }
            // Neighbouring rows as bwdif takes them at the borders: a missing row above or below is
            // replaced by the one on the other side.
            int up1 = y > 0 ? y - 1 : y + 1;
            int dn1 = y + 1 < height ? y + 1 : y - 1;
            ivec4 c4 = fetch(curTex, x, up1);
            ivec4 e4 = fetch(curTex, x, dn1);
            ivec4 outv;
            if (method == 1) {
                int up3 = y > 2 ? y - 3 : y + 1;
                int dn3 = y + 3 < height ? y + 3 : y - 1;
                ivec4 v = (sp0 * (c4 + e4) - sp1 * (fetch(curTex, x, up3) + fetch(curTex, x, dn3))) >> 13;
                result = store(clamp(v, 0, sampleMax));
                return;
            }
            // The frames either side of the made field's time: the missing field is in both.
            bool earlier = late == 1;
            ivec4 p2_0 = earlier ? fetch(prevTex, x, y) : here;
            ivec4 n2_0 = earlier ? here : fetch(nextTex, x, y);
            ivec4 p2_m2 = earlier ? fetch(prevTex, x, y - 2) : fetch(curTex, x, y - 2);
            ivec4 n2_m2 = earlier ? fetch(curTex, x, y - 2) : fetch(nextTex, x, y - 2);
            ivec4 p2_p2 = earlier ? fetch(prevTex, x, y + 2) : fetch(curTex, x, y + 2);
            ivec4 n2_p2 = earlier ? fetch(curTex, x, y + 2) : fetch(nextTex, x, y + 2);
            ivec4 pc = fetch(prevTex, x, up1), pe = fetch(prevTex, x, dn1);
            ivec4 nc = fetch(nextTex, x, up1), ne = fetch(nextTex, x, dn1);
            bool edge = y < 4 || y + 5 > height;
            bool spatial = !(y < 2 || y + 3 > height);
            ivec4 c3 = fetch(curTex, x, y - 3), e3 = fetch(curTex, x, y + 3);
            ivec4 p2_m4 = earlier ? fetch(prevTex, x, y - 4) : fetch(curTex, x, y - 4);
            ivec4 n2_m4 = earlier ? fetch(curTex, x, y - 4) : fetch(nextTex, x, y - 4);
            ivec4 p2_p4 = earlier ? fetch(prevTex, x, y + 4) : fetch(curTex, x, y + 4);
            ivec4 n2_p4 = earlier ? fetch(curTex, x, y + 4) : fetch(nextTex, x, y + 4);
            for (int i = 0; i < 4; i++) {
                int c = c4[i], e = e4[i];
                int d = (p2_0[i] + n2_0[i]) >> 1;
                int td0 = abs(p2_0[i] - n2_0[i]);
                int td1 = (abs(pc[i] - c) + abs(pe[i] - e)) >> 1;
                int td2 = (abs(nc[i] - c) + abs(ne[i] - e)) >> 1;
                int diff = max(max(td0 >> 1, td1), td2);
                if (diff == 0) {
                    outv[i] = d;
                    continue;
                }
                if (!edge || spatial) {
                    // yadif's spatial check: the made sample may move only as far from the temporal
                    // average as the field's own vertical detail allows.
                    int b = ((p2_m2[i] + n2_m2[i]) >> 1) - c;
                    int f = ((p2_p2[i] + n2_p2[i]) >> 1) - e;
                    int dc = d - c;
                    int de = d - e;
                    int mx = max(max(de, dc), min(b, f));
                    int mn = min(min(de, dc), max(b, f));
                    diff = max(max(diff, mn), -mx);
                }
                int interpol;
                if (edge) {
                    interpol = (c + e) >> 1;
                } else if (abs(c - e) > td0) {
                    interpol = (((hf0 * (p2_0[i] + n2_0[i])
                                  - hf1 * (p2_m2[i] + n2_m2[i] + p2_p2[i] + n2_p2[i])
                                  + hf2 * (p2_m4[i] + n2_m4[i] + p2_p4[i] + n2_p4[i])) >> 2)
                                + lf0 * (c + e) - lf1 * (c3[i] + e3[i])) >> 13;
                } else {
                    interpol = (sp0 * (c + e) - sp1 * (c3[i] + e3[i])) >> 13;
                }
                interpol = clamp(interpol, d - diff, d + diff);
                outv[i] = clamp(interpol, 0, sampleMax);
            }
            result = store(outv);
        }
        """
    }
}
