import GPUEncodeFilters

/// The plane-native writers of the fused direct path: a point chain evaluated once per luma pixel
/// and once per output chroma sample, instead of on the full-resolution R'G'B' that the chroma
/// decimation (`ChromaDecimator`) then averages (the reference's `packedBlockMain` evaluates it
/// 18 times per 4x2 block).
///
/// Each output chroma sample is the chain applied to the source's Y'CbCr decimated by the same
/// kernels (`chromaTaps`) the reference applies to the filtered R'G'B'. The decimation is linear, so
/// for a chain that is affine in Y'CbCr (a colour matrix, identity, a matrix change) both give the
/// same chroma; for others they differ where the picture is not smooth, by the chain's curvature
/// over the kernel's 5x4 neighbourhood (`applies` keeps the chains that stay within the accuracy bar).
/// It keeps the reference's 4x2 blocks and NV12 targets, so its transfers, compute variant and
/// 10-bit outputs (`FrameRenderer.writerOutputGLSL`) are the same.
enum PlaneNativeShaders {
    /// Whether the fused direct path of a run with these options and this chain uses the
    /// plane-native writers. One small function so a compiler pass (with a cost model) can own it.
    /// The optional passes off (`--no-optimize`) keeps the reference. Every built-in point look was
    /// measured against it (PlaneNativeTests; 8- and 10-bit sources, HDR to SDR and kept):
    /// - the chain: only filters affine in R'G'B' whose gain on colour differences is at most 1
    ///   (`staysClose`). why: the reference rounds each filter's output to 8 bits at every one of
    ///   the 20 pixels it averages into a chroma sample, and a later gain amplifies the difference
    ///   between those rounded pixels and one rounded sample (1977, chrome, clarendon, nashville,
    ///   process, toaster, transfer: 2 code values on a smooth gradient; process 47.1 dB on the 360p
    ///   rooftop clip); a curve or lookup bends over the kernel's 5x4 neighbourhood (fade,
    ///   amatorka: 2 code values on a steep smooth gradient). identity, sepia and grayscale
    ///   stay within 1 code value and above 50 dB. (mono, noir and tonal, grey whatever
    ///   the curve, would pass: left out all the same.)
    /// - `hdr`: an HDR source (PQ or HLG), left to the reference whatever the chain. Tone-mapped to
    ///   SDR, the tone curve is far from linear over an edge's neighbourhood (HLG, sepia: Cr
    ///   47.1 dB); kept (`--hdr keep`), the wide-gamut R'G'B' clips at saturated edges, per pixel
    ///   in the reference and once per sample here (HLG, sepia: Cr 48.6 dB, 10-bit).
    /// - `upright420`: the packed pass's sources (`FrameRenderer.isUpright420`), the only ones with
    ///   a plane-native writer. (A per-plane chroma pass for turned and other sources, evaluating
    ///   the chain once on the decimated Y'CbCr, measured 2 code values on a turned smooth gradient
    ///   and amatorka 49.0 dB on the turned rooftop clip: not kept.)
    /// 8- or 10-bit sources and the light do not change the answer.
    /// - at most two filters: each rounds its output to 8 bits in the reference, and three
    ///   roundings (faded: saturation, contrast, brightness) reached 2 code values on a smooth
    ///   gradient whose direction ffmpeg's `gradients` chose at random (CI, 2026-11-28).
    static func applies(_ filters: [FilterInstance], light: FilterLight, hdr: Bool, upright420: Bool, compile: CompileOptions) -> Bool {
        compile.optionalPasses && upright420 && !hdr && filters.count <= 2 && filters.allSatisfy(staysClose)
    }

    /// Whether `filter` keeps to the plane-native bar: an affine map of R'G'B' (its declaration's
    /// `affine`, before the clamp) without a second input, with no negative share of a channel and
    /// no gain above 1 on colour differences (`ColourAffine.isNonNegative`,
    /// `colourDifferenceGain`), at every keyframe. These are what was measured within the bar:
    /// identity, sepia, grayscale, brightness, contrast and saturation up to 1, colorControls so, a
    /// non-negative colorMatrix. A hue turn (negative shares) and raised saturation or contrast are
    /// not. (Not vignette: it reads the pixel's position, so the 20 pixels a chroma sample's kernel
    /// covers do not share one chain; 2 code values from the reference on a smooth 192x108 picture.)
    static func staysClose(_ filter: FilterInstance) -> Bool {
        guard filter.overlay.isEmpty else { return false }
        return ([0] + filter.keyframeTimes).allSatisfy { t in
            filter.affine(at: t).map { $0.isNonNegative && $0.colourDifferenceGain <= 1 + 1e-9 } ?? false
        }
    }

    /// The packed pass (upright 4:2:0; `FrameRenderer.packedBlockMain`'s place): a fragment (or
    /// compute invocation) per 4x2 block, eight luma evaluations and two chroma ones. The block's
    /// chroma samples (columns 4q and 4q+2 of the output, row m) are the source's own Cb and Cr at
    /// (2q, m) and (2q+1, m): the inverse kernels give back exactly the samples the linear
    /// upsampling started from, edges included. Their luma is the block's 5x4 neighbourhood
    /// (rows 2m-1 .. 2m+2, columns 4q-2 .. 4q+4, clamped as the reference clamps) under the same taps.
        static let packedBlockMain = FrameRenderer.nv12Block + """
    // Chroma columns 2q, 2q+1, 2q+2 of one row (clamped to the plane).
    vec3 chromaCols(SourceSampler tex, int q, int row) {
        vec4 a = fetch4(tex, ivec2(q >> 1, row));
        vec4 b = fetch4(tex, ivec2(min((q + 1) >> 1, texelMax.y), row));
        vec3 v = (q & 1) == 1 ? vec3(a.zw, b.x) : a.xyz;
        if (2 * q + 1 > chromaMax.x) v.y = v.x;
        if (2 * q + 2 > chromaMax.x) v.z = v.y;
        return v;
    }
    // Luma row y at columns 4q-2 .. 4q+4, past the picture's edges repeated: the block's own four
    // samples (`own`) and the five-tap sums across of its two chroma samples (`across`).
    void lumaRow(int q, int y, int lastX, out vec4 own, out vec2 across) {
        vec4 mid = fetch4(texY, ivec2(q, y));
        vec4 left = fetch4(texY, ivec2(max(q - 1, 0), y));
        vec4 right = fetch4(texY, ivec2(min(q + 1, texelMax.x), y));
        if (q == 0) left = vec4(mid.x);
        float l3 = 4 * q + 1 > lastX ? mid.x : mid.y;
        float l4 = 4 * q + 2 > lastX ? l3 : mid.z;
        float l5 = 4 * q + 3 > lastX ? l4 : mid.w;
        float l6 = 4 * q + 4 > lastX ? l5 : right.x;
        own = vec4(mid.x, l3, l4, l5);
        across = vec2(chromaH[0] * left.z + chromaH[1] * left.w + chromaH[2] * mid.x + chromaH[3] * l3 + chromaH[4] * l4,
                      chromaH[0] * mid.x + chromaH[1] * l3 + chromaH[2] * l4 + chromaH[3] * l5 + chromaH[4] * l6);
    }
    vec3 pixel(float y, float u, float v, int x, int row) {
        return filtered(vec3(y, u, v), vec2(float(x) + 0.5, float(row) + 0.5) / outSize).rgb;
    }
    void shadeBlock() {
        int q = blockCoord().x;
        int m = blockCoord().y;
        ivec2 last = lumaMax;
        int up = max(m - 1, 0);
        int down = min(m + 1, chromaMax.y);
        vec3 ua = chromaCols(texU, q, up), ub = chromaCols(texU, q, m), uc = chromaCols(texU, q, down);
        vec3 va = chromaCols(texV, q, up), vb = chromaCols(texV, q, m), vc = chromaCols(texV, q, down);
        // Row 2m sits at chroma row m - 1/4, row 2m+1 at m + 1/4; columns 4q+1 and 4q+3 halfway
        // between chroma columns (left-sited), as the reference's bilinear upsampling.
        vec3 u0 = 0.75 * ub + 0.25 * ua, u1 = 0.75 * ub + 0.25 * uc;
        vec3 v0 = 0.75 * vb + 0.25 * va, v1 = 0.75 * vb + 0.25 * vc;
        int y0 = 2 * m;
        int y1 = min(2 * m + 1, last.y);
        vec4 own0, own1, ownA, ownB;
        vec2 a0, a1, aA, aB;
        lumaRow(q, max(2 * m - 1, 0), last.x, ownA, aA);
        lumaRow(q, y0, last.x, own0, a0);
        lumaRow(q, y1, last.x, own1, a1);
        lumaRow(q, min(2 * m + 2, last.y), last.x, ownB, aB);
        int x = 4 * q;
        vec3 z = vec3(0.0);
        vec3 inner[14] = vec3[14](z, z,
            pixel(own0.x, u0.x, v0.x, x, y0), pixel(own0.y, 0.5 * (u0.x + u0.y), 0.5 * (v0.x + v0.y), x + 1, y0),
            pixel(own0.z, u0.y, v0.y, x + 2, y0), pixel(own0.w, 0.5 * (u0.y + u0.z), 0.5 * (v0.y + v0.z), x + 3, y0), z,
            z, z,
            pixel(own1.x, u1.x, v1.x, x, y1), pixel(own1.y, 0.5 * (u1.x + u1.y), 0.5 * (v1.x + v1.y), x + 1, y1),
            pixel(own1.z, u1.y, v1.y, x + 2, y1), pixel(own1.w, 0.5 * (u1.y + u1.z), 0.5 * (v1.y + v1.z), x + 3, y1), z);
        vec2 luma = chromaV[0] * aA + chromaV[1] * a0 + chromaV[2] * a1 + chromaV[3] * aB;
        // (The chroma rows sit between luma rows 2m and 2m+1.)
        writeSamples(inner, pixel(luma.x, ub.x, vb.x, x, 2 * m), pixel(luma.y, ub.y, vb.y, x + 2, 2 * m));
    }

    """ + FrameRenderer.blockEntry
}
