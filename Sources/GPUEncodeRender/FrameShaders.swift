import CEGL
import GPUEncodeFilters

// The GLSL of the video renderer's own passes: the fused passes (the source sampling is in
// SourceSampling.swift) straight to Y'CbCr, and the conversions at the end of a chain.

extension FrameRenderer {
    /// The first pass of a chain over video: the source planes, converted to (SDR BT.709) RGB.
    static func chainSourceGLSL(_ color: SourceColorShader, linear: Bool = false, sampling: SourceSampling = SourceSampling(bits: 8)) -> String {
        sourceUniforms(sampling) + color.glsl + (linear ? lightFunctions : "") + """
        vec4 sourcePixel(vec2 p) {
            vec3 yuv = sourceAt(srcFromOut * p + srcOffset);
            return vec4(\(linear ? "toLinear(sourceRGB(yuv))" : "sourceRGB(yuv)"), 1.0);
        }

        """
    }

    /// Source sampling, colour conversion and the fused point-filter chain (`filtered`), for the
    /// passes that go straight from source planes to output planes.
    static func prelude(_ filters: [FilterInstance], color: SourceColorShader, roundTo8Bits: Bool = true,
                        sampling: SourceSampling = SourceSampling(bits: 8)) -> String {
        let (declarations, calls) = FilterCodegen.pointChain(filters.enumerated().map { ("f\($0)_", $1) }, roundTo8Bits: roundTo8Bits)
        return ChainRenderer.header + sourceUniforms(sampling) + color.glsl + lightGLSL + declarations + """
        // uv: where the pixel is in the output, (0, 0) top-left to (1, 1) bottom-right.
        vec4 filtered(vec3 yuv, vec2 uv) {
            vec4 c = vec4(sourceRGB(yuv), 1.0);
        #ifdef LINEAR_LIGHT
            c.rgb = toLinear(c.rgb);
        #endif
        \(calls)#ifdef LINEAR_LIGHT
            c.rgb = fromLinear(c.rgb);
        #endif
            return c;
        }

        """
    }

    /// Ordered dither for 8-bit outputs of deep sources (DITHER defined): an 8x8 Bayer
    /// threshold of -1/2 .. 1/2 code value added before the target rounds to 8 bits, so a 10-bit
    /// gradient becomes a fine pattern instead of bands (HighBitDepthTests measure it). It depends on the pixel's position only, so pipelined and --deterministic runs,
    /// and every frame, agree byte for byte. Without DITHER the macros are the plain values: 8-bit
    /// sources compile to the same shaders as before.
    static let ditherGLSL = """
    #ifdef DITHER
    float dither(ivec2 p) {
        int x = p.x & 7;
        int y = p.y & 7;
        int v = ((((x ^ y) >> 2) & 1) << 1) | ((y >> 2) & 1) | ((((x ^ y) >> 1) & 1) << 3) | (((y >> 1) & 1) << 2)
            | (((x ^ y) & 1) << 5) | ((y & 1) << 4);
        return ((float(v) + 0.5) / 64.0 - 0.5) / 255.0;
    }
    vec4 dither4(ivec2 p) { return vec4(dither(p), dither(p + ivec2(1, 0)), dither(p + ivec2(2, 0)), dither(p + ivec2(3, 0))); }
    #define DITHERED(v, p) ((v) + dither(p))
    #define DITHERED4(v, p) ((v) + dither4(p))
    #else
    #define DITHERED(v, p) (v)
    #define DITHERED4(v, p) (v)
    #endif

    """

    /// What every writer (a shader whose outputs are the output planes' codes) declares its outputs
    /// and stores them with, so one generated source serves both target formats: 8-bit targets
    /// (normalised, dithered for deep sources: `ditherGLSL`) or, with TEN_BIT_OUT defined (kept
    /// HDR), RGBA16UI targets of 10-bit codes. `OUT4(location, name)` / `OUT1(location, name)`
    /// declare a vec4 / float output; `STORE4(v)` / `STORE1(v)` is what is assigned to it. A value v
    /// is code v · 1020 (the deep sources' scale, `sourceSampling16`: 10-bit 64 is 8-bit 16, so the
    /// 8-bit colour matrices and offsets hold and an untouched sample comes back as itself),
    /// rounded, no dither.
    static let writerOutputGLSL = ditherGLSL + """
    #ifdef TEN_BIT_OUT
    #define OUT4(location_, name_) layout(location = location_) out uvec4 name_
    #define OUT1(location_, name_) layout(location = location_) out uvec4 name_
    uvec4 tenBitCode(vec4 v) { return uvec4(clamp(floor(v * 1020.0 + 0.5), 0.0, 1023.0)); }
    #define STORE4(v) tenBitCode(v)
    #define STORE1(v) uvec4(tenBitCode(vec4(v)).x, 0u, 0u, 0u)
    #else
    #define OUT4(location_, name_) layout(location = location_) out vec4 name_
    #define OUT1(location_, name_) layout(location = location_) out float name_
    #define STORE4(v) (v)
    #define STORE1(v) (v)
    #endif

    """

    /// `glsl` (a whole shader) with `name` defined for the preprocessor when `on`.
    static func defining(_ name: String, in glsl: String, _ on: Bool) -> String {
        guard on else { return glsl }
        precondition(glsl.hasPrefix("#version 300 es\n"), "a shader starts with its version line")
        return "#version 300 es\n#define \(name)\n" + glsl.dropFirst("#version 300 es\n".count)
    }

    /// `glsl` (a whole shader) with the macro `name` defined as `value`.
    static func defining(_ name: String, as value: String, in glsl: String) -> String {
        precondition(glsl.hasPrefix("#version 300 es\n"), "a shader starts with its version line")
        return "#version 300 es\n#define \(name) \(value)\n" + glsl.dropFirst("#version 300 es\n".count)
    }

    /// A preset's `"light": "linear"` (LINEAR_LIGHT defined): the BT.709 transfer function and its
    /// inverse, between the video's R'G'B' and linear RGB. The source is linearised after its
    /// conversion to RGB, the filters run on linear values (in half float: no 8-bit rounding between
    /// them), and the result is encoded again before it becomes Y'CbCr.
    static let lightGLSL = "#ifdef LINEAR_LIGHT\n" + lightFunctions + "#endif\n\n"

    /// BT.709's transfer function and its inverse.
    static let lightFunctions = """
    vec3 toLinear(vec3 v) {
        v = clamp(v, 0.0, 1.0);
        return mix(v / 4.5, pow((v + 0.099) / 1.099, vec3(1.0 / 0.45)), step(vec3(0.081), v));
    }
    vec3 fromLinear(vec3 l) {
        l = clamp(l, 0.0, 1.0);
        return mix(4.5 * l, 1.099 * pow(l, vec3(0.45)) - 0.099, step(vec3(0.018), l));
    }

    """

    /// The chain's first pass for `light`: the source in linear RGB when linear.
    static func chainSource(light: FilterLight, color: SourceColorShader, sampling: SourceSampling) -> String {
        chainSourceGLSL(color, linear: light == .linear, sampling: sampling)
    }

    /// Four horizontally adjacent output pixels per fragment: a quarter of the fragments, and the
    /// RGBA8 result is already the bytes of the Y plane.
    static let directLumaMain = writerOutputGLSL + """
    OUT4(0, fragColor);
    float lumaAt(vec2 o) {
        vec2 s = clamp(srcFromOut * o + srcOffset, vec2(0.5), lumaSize - 0.5);
        return (rgbToYuv * filtered(sourceAt(s), o / outSize).rgb).x + outOffset.x;
    }
    void main() {
        vec2 o = vec2(floor(gl_FragCoord.x) * 4.0 + 0.5, gl_FragCoord.y);
        fragColor = STORE4(DITHERED4(vec4(lumaAt(o), lumaAt(o + vec2(1.0, 0.0)), lumaAt(o + vec2(2.0, 0.0)), lumaAt(o + vec2(3.0, 0.0))),
                                     ivec2(int(gl_FragCoord.x) * 4, int(gl_FragCoord.y))));
    }
    """

    /// The chroma downsampling every unscaled writer shares, as GLSL constants: left-sited 4:2:0
    /// from a 5x4 neighbourhood of full-resolution RGB, columns 2i-2 .. 2i+2 by rows 2j-1 .. 2j+2.
    /// The taps are the run's `ChromaDecimator` (CHROMA_ACROSS, CHROMA_DOWN: `ChromaDecimator.defined`),
    /// chosen by what the source's chroma was: the exact inverse of the linear upsampling along an
    /// axis it was subsampled on, an anti-aliasing low-pass along one it was not.
    static let chromaTaps = """
    const float chromaH[5] = CHROMA_ACROSS;
    const float chromaV[4] = CHROMA_DOWN;

    """

    /// Chroma for one output chroma sample (left-sited: column 2i, rows 2j and 2j+1) over its 5x4
    /// neighbourhood (`chromaTaps`), clamped to the source (an odd size's last row or column, cropped
    /// from the output, still feeds the chroma beside it, as it fed the source's upsampling). The
    /// rows 2j and 2j+1 (equal weights) are filtered as four 2x2 averages (`sourceBetween`: a 5-tap
    /// row kernel (a, 1/4, c, 1/4, a) is c times the pairs beside column 2i plus 2a times the pairs
    /// outside them); each outer row is read at column 2i alone and filtered once. The packed pass
    /// averages those rows across the five columns instead; in Y'CbCr both give the same chroma
    /// where the kernel across undoes the linear chroma upsampling (the only case the packed pass
    /// sees), so for linear filters the paths agree while this one reads 18 texture samples per
    /// chroma sample, not 60: llvmpipe's cost is in its texture reads.
    static let directChromaMain = chromaTaps + writerOutputGLSL + """
    OUT1(0, cb);
    OUT1(1, cr);
    vec3 outerRow(int i, int y, ivec2 last) {
        vec2 o = vec2(float(2 * i) + 0.5, float(y) + 0.5);
        vec2 inside = vec2(o.x, float(clamp(y, 0, last.y)) + 0.5);
        return filtered(sourceAt(clamp(srcFromOut * o + srcOffset, vec2(0.5), lumaSize - 0.5)), inside / outSize).rgb;
    }
    void main() {
        ivec2 c = ivec2(gl_FragCoord.xy);
        ivec2 last = ivec2(outSize) - 1;
        float top = float(2 * c.y) + 1.0;
        // Corners between columns (2i-1, 2i), (2i, 2i+1), (2i-2, 2i-1), (2i+1, 2i+2); past the source's
        // edge its clamp-to-edge sampling repeats the edge pixels.
        vec3 inner = vec3(0.0);
    \([(0, "chromaH[2]"), (1, "chromaH[2]"), (-1, "2.0 * chromaH[0]"), (2, "2.0 * chromaH[0]")].map { "    inner += \($0.1) * filtered(sourceBetween(srcFromOut * vec2(float(2 * c.x + \($0.0)), top) + srcOffset), vec2(float(2 * c.x + \($0.0)), top) / outSize).rgb;" }.joined(separator: "\n"))
        vec3 rgb = 2.0 * chromaV[1] * inner + chromaV[0] * outerRow(c.x, 2 * c.y - 1, last) + chromaV[3] * outerRow(c.x, 2 * c.y + 2, last);
        vec3 yuv = rgbToYuv * rgb + outOffset;
        cb = STORE1(DITHERED(yuv.y, c + ivec2(4, 0)));
        cr = STORE1(DITHERED(yuv.z, c + ivec2(0, 4)));
    }
    """

    /// The packed pass (upright 4:2:0): each fragment shades a 4x2 block of pixels and writes its
    /// eight Y samples (even and odd row to two targets, four per texel: the plane's bytes) and its
    /// two Cb and two Cr samples as one texel of an NV12 CbCr plane (x264's own layout). The chroma
    /// samples come from rows 2m-1 .. 2m+2 and columns 4q-2 .. 4q+4 (`chromaTaps`), clamped to the
    /// source (an odd size's cropped row and column still feed them; the RGBA path, which starts from
    /// the cropped picture, clamps to that): the block's own rows filtered pixel by pixel, the outer two
    /// (weight chromaV[0]) averaged in Y'CbCr across each sample's five columns and filtered once (18
    /// filter evaluations for 8 pixels rather than 28, `outerRow`), so this single pass equals the
    /// RGBA path up to rounding for linear filters and nearly so for others. Sources come packed four samples per texel; chroma is interpolated
    /// by hand exactly as bilinear sampling would (left-sited columns, rows weighted 3/4 and 1/4).
    static let packedBlockMain = nv12Block + """
    // Chroma columns 2q-1 .. 2q+2 of one row, edges repeated.
    vec4 chromaCols(SourceSampler tex, int q, int row) {
        int odd = q & 1;
        int first = (q >> 1) - 1 + odd;
        vec4 a = fetch4(tex, ivec2(max(first, 0), row));
        vec4 b = fetch4(tex, ivec2(min(first + 1, texelMax.y), row));
        vec4 v = odd == 1 ? vec4(a.yzw, b.x) : vec4(a.w, b.xyz);
        if (q == 0) v.x = v.y;
        if (2 * q > chromaMax.x) v.y = v.x;
        if (2 * q + 1 > chromaMax.x) v.z = v.y;
        if (2 * q + 2 > chromaMax.x) v.w = v.z;
        return v;
    }
    // Per-pixel chroma for columns 4q-2 .. 4q+4 from chroma columns 2q-1 .. 2q+2.
    void spread(vec4 c, out float p[7]) {
        p[0] = c.x; p[1] = 0.5 * (c.x + c.y); p[2] = c.y; p[3] = 0.5 * (c.y + c.z);
        p[4] = c.z; p[5] = 0.5 * (c.z + c.w); p[6] = c.w;
    }
    // Y'CbCr of luma row 2m-1+r (clamped to the picture) at columns 4q-2 .. 4q+4 (clamped): an even
    // row 2n sits at chroma row n - 1/4, an odd row 2n+1 at n + 1/4 (ua: chroma row m-1, ub: m,
    // uc: m+1). Every array index is a constant once the calls are inlined: llvmpipe turns indices
    // it cannot resolve into memory gathers, twenty times slower.
    void rowYUV(int q, int m, int r, ivec2 last, float ua[7], float ub[7], float uc[7], float va[7], float vb[7], float vc[7],
                out vec3 yuv[7], out int y) {
        y = clamp(2 * m - 1 + r, 0, last.y);
        int t = y - (2 * m - 1);
        float wa = t == 0 ? 0.75 : t == 1 ? 0.25 : 0.0;
        float wb = t == 0 ? 0.25 : t == 1 ? 0.75 : t == 2 ? 0.75 : 0.25;
        float wc = t == 2 ? 0.25 : t == 3 ? 0.75 : 0.0;
        vec4 mid = fetch4(texY, ivec2(q, y));
        vec4 left = fetch4(texY, ivec2(max(q - 1, 0), y));
        vec4 right = fetch4(texY, ivec2(min(q + 1, texelMax.x), y));
        float l[7] = float[7](left.z, left.w, mid.x, mid.y, mid.z, mid.w, right.x);
    \((0..<7).map { "    yuv[\($0)] = vec3(l[\($0)], wa * ua[\($0)] + wb * ub[\($0)] + wc * uc[\($0)], wa * va[\($0)] + wb * vb[\($0)] + wc * vc[\($0)]);" }.joined(separator: "\n"))
        // Columns past the picture repeat its edge column.
        if (q == 0) { yuv[1] = yuv[2]; yuv[0] = yuv[2]; }
    \((1..<7).map { "    if (4 * q - 2 + \($0) > last.x) yuv[\($0)] = yuv[\($0 - 1)];" }.joined(separator: "\n"))
    }
    // An outer row (r = 0: row 2m-1, r = 3: row 2m+2, clamped), which feeds chroma only: its Y'CbCr
    // averaged across each chroma sample's five columns (`chromaH`), then filtered once per sample.
    // Averaging the linearly interpolated chroma with the 5/3 kernel gives back the chroma at the
    // sample's own column (a, b: chroma columns 2q and 2q+1 of rows m-1, m, m+1), so only luma is
    // summed. (Written apart from rowYUV: llvmpipe ran the pass five times slower with the outer
    // rows going through the seven-column arrays.)
    void outerRow(int q, int m, int r, ivec2 last, float ua, float ub, float uc, float va, float vb, float vc,
                  float ua1, float ub1, float uc1, float va1, float vb1, float vc1, out vec3 first, out vec3 second) {
        int y = clamp(2 * m - 1 + r, 0, last.y);
        int t = y - (2 * m - 1);
        float wa = t == 0 ? 0.75 : t == 1 ? 0.25 : 0.0;
        float wb = t == 0 ? 0.25 : t == 1 ? 0.75 : t == 2 ? 0.75 : 0.25;
        float wc = t == 2 ? 0.25 : t == 3 ? 0.75 : 0.0;
        vec4 mid = fetch4(texY, ivec2(q, y));
        vec4 left = fetch4(texY, ivec2(max(q - 1, 0), y));
        vec4 right = fetch4(texY, ivec2(min(q + 1, texelMax.x), y));
        if (q == 0) left = vec4(mid.x);
        float l4 = 4 * q + 2 > last.x ? mid.y : mid.z;
        float l5 = 4 * q + 3 > last.x ? l4 : mid.w;
        float l6 = 4 * q + 4 > last.x ? l5 : right.x;
        float y0 = chromaH[0] * left.z + chromaH[1] * left.w + chromaH[2] * mid.x + chromaH[3] * mid.y + chromaH[4] * l4;
        float y1 = chromaH[0] * mid.x + chromaH[1] * mid.y + chromaH[2] * l4 + chromaH[3] * l5 + chromaH[4] * l6;
        first = filtered(vec3(y0, wa * ua + wb * ub + wc * uc, wa * va + wb * vb + wc * vc), vec2(float(4 * q) + 0.5, float(y) + 0.5) / outSize).rgb;
        second = filtered(vec3(y1, wa * ua1 + wb * ub1 + wc * uc1, wa * va1 + wb * vb1 + wc * vc1), vec2(float(4 * q + 2) + 0.5, float(y) + 0.5) / outSize).rgb;
    }
    void shadeBlock() {
        int q = blockCoord().x;
        int m = blockCoord().y;
        // The chroma neighbourhood ends at the source's edge, not the output's: an odd size's last
        // row and column, cropped from the output, fed the upsampled chroma beside them.
        ivec2 last = lumaMax;
        int up = max(m - 1, 0);
        int down = min(m + 1, chromaMax.y);
        // Chroma rows m-1, m, m+1 (clamped), spread to the seven columns.
        float ua[7]; float ub[7]; float uc[7]; float va[7]; float vb[7]; float vc[7];
        spread(chromaCols(texU, q, up), ua); spread(chromaCols(texU, q, m), ub); spread(chromaCols(texU, q, down), uc);
        spread(chromaCols(texV, q, up), va); spread(chromaCols(texV, q, m), vb); spread(chromaCols(texV, q, down), vc);
        vec3 inner[14];
        vec3 outer[4];
        vec3 yuv[7];
        int y;
        // The block's own rows, pixel by pixel.
        rowYUV(q, m, 1, last, ua, ub, uc, va, vb, vc, yuv, y);
    \((0..<7).map { "    inner[\($0)] = filtered(yuv[\($0)], vec2(float(4 * q + \($0 - 2)) + 0.5, float(y) + 0.5) / outSize).rgb;" }.joined(separator: "\n"))
        rowYUV(q, m, 2, last, ua, ub, uc, va, vb, vc, yuv, y);
    \((0..<7).map { "    inner[\(7 + $0)] = filtered(yuv[\($0)], vec2(float(4 * q + \($0 - 2)) + 0.5, float(y) + 0.5) / outSize).rgb;" }.joined(separator: "\n"))
        // The outer rows feed chroma only (weight chromaV[0]): averaged in Y'CbCr across each sample's five
        // columns and filtered once per sample.
        outerRow(q, m, 0, last, ua[2], ub[2], uc[2], va[2], vb[2], vc[2], ua[4], ub[4], uc[4], va[4], vb[4], vc[4], outer[0], outer[1]);
        outerRow(q, m, 3, last, ua[2], ub[2], uc[2], va[2], vb[2], vc[2], ua[4], ub[4], uc[4], va[4], vb[4], vc[4], outer[2], outer[3]);
        writeBlock(inner, outer);
    }

    """ + blockEntry

    /// The block passes' entry: a fragment per block, or (COMPUTE) an invocation per block that
    /// stores the block's bytes into the NV12 frame in shader storage, laid out as the planes are
    /// (Y rows, then CbCr rows, `nv12RowWords` words apart), which the CPU copies out as it is.
    static let blockEntry = """
    #ifdef COMPUTE
    layout(std430, binding = 0) writeonly buffer NV12Frame { highp uint nv12Words[]; };
    uniform int nv12RowWords;
    uniform int nv12ChromaWord;
    uniform ivec2 blockCount;
    #endif
    void main() {
    #ifdef COMPUTE
        ivec2 b = blockCoord();
        if (b.x >= blockCount.x || b.y >= blockCount.y) return;
        shadeBlock();
        // packUnorm4x8 rounds as an RGBA8 target does: round(clamp(v, 0, 1) * 255).
        int row = 2 * b.y * nv12RowWords + b.x;
        nv12Words[row] = packUnorm4x8(yEven);
        nv12Words[row + nv12RowWords] = packUnorm4x8(yOdd);
        nv12Words[nv12ChromaWord + b.y * nv12RowWords + b.x] = packUnorm4x8(cbcr);
    #else
        shadeBlock();
    #endif
    }

    """

    /// Blocks per compute work group: 32x4, so a group's stores cover 128 bytes of each of its rows.
    /// (`runBlocks` dispatches by the same numbers.)
    static let computeGroup = (x: 32, y: 4)

    /// `glsl` (a whole block-pass shader) as a GLES 3.1 compute shader (COMPUTE defined), one
    /// invocation per block, `computeGroup` blocks per work group.
    static func asCompute(_ glsl: String) -> String {
        precondition(glsl.hasPrefix("#version 300 es\n"), "a shader starts with its version line")
        return "#version 310 es\n#define COMPUTE\nlayout(local_size_x = \(computeGroup.x), local_size_y = \(computeGroup.y)) in;\n"
            + glsl.dropFirst("#version 300 es\n".count)
    }

    /// `vec3 rgbaAt(ivec2 p)`: pixel `p` of the chain's picture as R'G'B' (linear light encoded
    /// first), read by `fetch` (GLSL of a vec4 in `p`): texel `p` of `rgbaTex` unless the picture is
    /// read some other way (a reduced one, ReducedOutput.swift). Needs `lightGLSL`.
    static func rgbaReader(fetch: String = "texelFetch(rgbaTex, p, 0)") -> String {
        """
        vec3 rgbaAt(ivec2 p) {
            vec3 c = \(fetch).rgb;
        #ifdef LINEAR_LIGHT
            c = fromLinear(c);
        #endif
            return c;
        }

        """
    }

    /// The uniforms every RGBA-to-NV12 conversion reads.
    static let nv12Head = """
    #version 300 es
    precision highp float;
    precision highp int;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    uniform ivec2 rgbaMax;

    """

    /// `nv12FromRGBA`'s main over `rgbaAt`: the 4x2 block's 7x4 neighbourhood, clamped.
    static let nv12Main = """
    void shadeBlock() {
        int q = blockCoord().x;
        int m = blockCoord().y;
        vec3 inner[14];
        vec3 outer[4];
        for (int r = 0; r < 4; r++) {
            int y = clamp(2 * m - 1 + r, 0, rgbaMax.y);
            vec3 px[7];
            for (int k = 0; k < 7; k++) px[k] = rgbaAt(ivec2(clamp(4 * q - 2 + k, 0, rgbaMax.x), y));
            if (r == 1 || r == 2) {
                for (int k = 0; k < 7; k++) inner[7 * (r - 1) + k] = px[k];
            } else {
                vec3 a = vec3(0.0);
                vec3 b = vec3(0.0);
                for (int k = 0; k < 5; k++) {
                    a += chromaH[k] * px[k];
                    b += chromaH[k] * px[k + 2];
                }
                outer[r == 0 ? 0 : 2] = a;
                outer[r == 0 ? 1 : 3] = b;
            }
        }
        writeBlock(inner, outer);
    }

    """ + blockEntry

    /// RGBA (the end of a chain) to NV12: each fragment converts a 4x2 block, with the same
    /// chroma taps (`chromaTaps`) over the same clamped neighbourhood as the packed pass.
    static let nv12FromRGBA = nv12Head + lightGLSL + rgbaReader() + nv12Block + nv12Main

    /// `nv12FromRGBA` for a scaled output (`ScaledChroma`): Y from the block's eight pixels, Cb and Cr
    /// from the two chroma-sited samples the halving passes made (unit 1, `chromaTex`).
    static let nv12FromScaled = nv12Head + "uniform highp sampler2D chromaTex;\n" + lightGLSL + rgbaReader() + nv12Block + """
    vec3 px(int x, int y) { return rgbaAt(clamp(ivec2(x, y), ivec2(0), rgbaMax)); }
    void shadeBlock() {
        int q = blockCoord().x;
        int m = blockCoord().y;
        // (Only the block's own pixels: writeSamples reads no others.)
        vec3 z = vec3(0.0);
        vec3 inner[14] = vec3[14](z, z, px(4 * q, 2 * m), px(4 * q + 1, 2 * m), px(4 * q + 2, 2 * m), px(4 * q + 3, 2 * m), z,
                                  z, z, px(4 * q, 2 * m + 1), px(4 * q + 1, 2 * m + 1), px(4 * q + 2, 2 * m + 1), px(4 * q + 3, 2 * m + 1), z);
        int last = (rgbaMax.x - 1) / 2;
        writeSamples(inner, texelFetch(chromaTex, ivec2(min(2 * q, last), m), 0).rgb,
                     texelFetch(chromaTex, ivec2(min(2 * q + 1, last), m), 0).rgb);
    }

    """ + blockEntry

    /// The NV12 writer both single-pass shaders share. A fragment owns a 4x2 block. `inner` holds
    /// the RGB of rows 2m and 2m+1 (index 7r + k) at columns 4q-2 .. 4q+4 (k = 0..6), clamped to the
    /// picture (the columns around the block feed chroma only); `outer` the rows 2m-1 and 2m+2
    /// already averaged across each chroma sample's five columns (row 2m-1 for samples 4q and 4q+2,
    /// then row 2m+2). Eight Y samples go to two RGBA8 targets (even and odd rows: the plane's
    /// bytes), and the two left-sited chroma samples (`chromaTaps`) as one CbCr texel. Needs
    /// `rgbToYuv` and `outOffset`.
    static let nv12Block = chromaTaps + writerOutputGLSL + """
    #ifdef COMPUTE
    // The compute pass (`asCompute`): one invocation per block; `computeMain` stores these.
    vec4 yEven;
    vec4 yOdd;
    vec4 cbcr;
    ivec2 blockCoord() { return ivec2(gl_GlobalInvocationID.xy); }
    #else
    OUT4(0, yEven);
    OUT4(1, yOdd);
    OUT4(2, cbcr);
    ivec2 blockCoord() { return ivec2(gl_FragCoord.xy); }
    #endif
    // (Written out without loops: llvmpipe is much slower at array indices it cannot resolve.)
    // `inner` as writeBlock's; `a`, `b`: the R'G'B' of the block's two chroma samples.
    void writeSamples(vec3 inner[14], vec3 a, vec3 b) {
        vec3 lumaRow = vec3(rgbToYuv[0][0], rgbToYuv[1][0], rgbToYuv[2][0]);
        ivec2 block = blockCoord();
        yEven = STORE4(DITHERED4(vec4(dot(lumaRow, inner[2]), dot(lumaRow, inner[3]), dot(lumaRow, inner[4]), dot(lumaRow, inner[5])) + outOffset.x,
                                 ivec2(4 * block.x, 2 * block.y)));
        yOdd = STORE4(DITHERED4(vec4(dot(lumaRow, inner[9]), dot(lumaRow, inner[10]), dot(lumaRow, inner[11]), dot(lumaRow, inner[12])) + outOffset.x,
                                ivec2(4 * block.x, 2 * block.y + 1)));
        vec3 c0 = rgbToYuv * a + outOffset;
        vec3 c1 = rgbToYuv * b + outOffset;
        ivec2 chroma = ivec2(2 * block.x, block.y);
        cbcr = STORE4(vec4(DITHERED(c0.y, chroma + ivec2(4, 0)), DITHERED(c0.z, chroma + ivec2(0, 4)),
                           DITHERED(c1.y, chroma + ivec2(5, 0)), DITHERED(c1.z, chroma + ivec2(1, 4))));
    }
    void writeBlock(vec3 inner[14], vec3 outer[4]) {
        vec3 c[7] = vec3[7](inner[0] + inner[7], inner[1] + inner[8], inner[2] + inner[9], inner[3] + inner[10],
                            inner[4] + inner[11], inner[5] + inner[12], inner[6] + inner[13]);
        vec3 a = chromaV[0] * outer[0] + chromaV[3] * outer[2]
            + chromaV[1] * (chromaH[0] * c[0] + chromaH[1] * c[1] + chromaH[2] * c[2] + chromaH[3] * c[3] + chromaH[4] * c[4]);
        vec3 b = chromaV[0] * outer[1] + chromaV[3] * outer[3]
            + chromaV[1] * (chromaH[0] * c[2] + chromaH[1] * c[3] + chromaH[2] * c[4] + chromaH[3] * c[5] + chromaH[4] * c[6]);
        writeSamples(inner, a, b);
    }

    """

    static let lumaFromRGBA = """
    #version 300 es
    precision highp float;
    precision highp int;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;

    """ + lightGLSL + writerOutputGLSL + """
    OUT1(0, y);
    void main() {
        vec3 rgb = texelFetch(rgbaTex, ivec2(gl_FragCoord.xy), 0).rgb;
    #ifdef LINEAR_LIGHT
        rgb = fromLinear(rgb);
    #endif
        y = STORE1(DITHERED((rgbToYuv * rgb).x + outOffset.x, ivec2(gl_FragCoord.xy)));
    }
    """

    /// The same chroma taps as the direct path, on the filtered RGBA picture.
    static let chromaFromRGBA = """
    #version 300 es
    precision highp float;
    precision highp int;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    uniform ivec2 rgbaMax;
    """ + "\n" + lightGLSL + chromaTaps + writerOutputGLSL + """
    OUT1(0, cb);
    OUT1(1, cr);
    void main() {
        ivec2 c = ivec2(gl_FragCoord.xy);
        vec3 rgb = vec3(0.0);
        for (int r = 0; r < 4; r++) {
            for (int k = 0; k < 5; k++) {
                ivec2 p = clamp(ivec2(2 * c.x - 2 + k, 2 * c.y - 1 + r), ivec2(0), rgbaMax);
                vec3 c = texelFetch(rgbaTex, p, 0).rgb;
    #ifdef LINEAR_LIGHT
                c = fromLinear(c);
    #endif
                rgb += chromaV[r] * chromaH[k] * c;
            }
        }
        vec3 yuv = rgbToYuv * rgb + outOffset;
        cb = STORE1(DITHERED(yuv.y, c + ivec2(4, 0)));
        cr = STORE1(DITHERED(yuv.z, c + ivec2(0, 4)));
    }
    """

    /// `chromaFromRGBA` for a scaled output: Cb and Cr of the chroma-sited samples the halving
    /// passes made (`ScaledChroma`, unit 1).
    static let chromaFromScaled = """
    #version 300 es
    precision highp float;
    precision highp int;
    uniform highp sampler2D chromaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    """ + "\n" + writerOutputGLSL + """
    OUT1(0, cb);
    OUT1(1, cr);
    void main() {
        ivec2 c = ivec2(gl_FragCoord.xy);
        vec3 yuv = rgbToYuv * texelFetch(chromaTex, c, 0).rgb + outOffset;
        cb = STORE1(DITHERED(yuv.y, c + ivec2(4, 0)));
        cr = STORE1(DITHERED(yuv.z, c + ivec2(0, 4)));
    }
    """
}
