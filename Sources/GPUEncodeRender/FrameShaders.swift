import CEGL
import GPUEncodeFilters

// The GLSL of the video renderer's own passes: sampling the source planes, the fused passes
// straight to Y'CbCr, and the conversions at the end of a chain.

extension FrameRenderer {
    /// The first pass of a chain over video: the source planes, converted to (SDR BT.709) RGB.
    static func chainSourceGLSL(_ color: SourceColorShader) -> String {
        sourceUniforms + color.glsl + """
        vec4 sourcePixel(vec2 p) {
            vec3 yuv = sourceAt(srcFromOut * p + srcOffset);
            return vec4(sourceRGB(yuv), 1.0);
        }

        """
    }

    /// The source planes and how to sample them; shared by the fused passes and the chain's first pass.
    /// The sampling itself is `sourceSampling8`, which `forDepth` swaps for deep sources.
    static let sourceUniforms = """
    uniform mat3 yuvToRgb;
    uniform vec3 yuvOffset;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    uniform mat2 srcFromOut;
    uniform vec2 srcOffset;
    uniform vec2 lumaSize;
    uniform vec2 chromaScale;
    uniform vec2 chromaBias;
    uniform vec2 chromaSize;
    uniform ivec2 lumaMax;
    uniform ivec2 chromaMax;
    uniform ivec2 texelMax;

    """ + sourceSampling8

    /// 8-bit planes: R8 textures sampled bilinearly by the GPU (or RGBA8, four samples a texel, for
    /// the packed pass, which reads them through `fetch4`).
    static let sourceSampling8 = """
    #define SourceSampler highp sampler2D
    uniform highp sampler2D texY;
    uniform highp sampler2D texU;
    uniform highp sampler2D texV;
    vec4 fetch4(highp sampler2D t, ivec2 p) { return texelFetch(t, p, 0); }
    vec2 chromaCoord(vec2 s) { return (s * chromaScale + chromaBias) / chromaSize; }
    // s: a source pixel centre (pixel units).
    vec3 sourceAt(vec2 s) {
        vec2 cc = chromaCoord(s);
        return vec3(texelFetch(texY, ivec2(s), 0).r, texture(texU, cc).r, texture(texV, cc).r);
    }
    // s: a source pixel corner; luma is the average of the four pixels around it.
    vec3 sourceBetween(vec2 s) {
        vec2 cc = chromaCoord(s);
        return vec3(texture(texY, s / lumaSize).r, texture(texU, cc).r, texture(texV, cc).r);
    }

    """

    /// Deep planes (9 to 16 bits): R16UI textures (RGBA16UI for the packed pass), which GLES 3.0
    /// cannot filter, so bilinear sampling is done here, exactly, on the integer codes. Every fetch
    /// returns code / (255 * 2^(bits-8)): 10-bit 64 is 8-bit 16, so the 8-bit colour matrices hold.
    static func sourceSampling16(bits: Int) -> String {
        """
        #define SourceSampler highp usampler2D
        uniform highp usampler2D texY;
        uniform highp usampler2D texU;
        uniform highp usampler2D texV;
        const float sampleScale = 1.0 / \(Double(255 << (bits - 8)));
        vec4 fetch4(highp usampler2D t, ivec2 p) { return vec4(texelFetch(t, p, 0)) * sampleScale; }
        float code16(highp usampler2D t, ivec2 p, ivec2 mx) { return float(texelFetch(t, clamp(p, ivec2(0), mx), 0).r); }
        // c: a position in texels (centres at i + 0.5), clamped to the edge as GL_CLAMP_TO_EDGE does.
        float bilinear16(highp usampler2D t, vec2 c, ivec2 mx) {
            vec2 f = c - 0.5;
            vec2 i = floor(f);
            vec2 w = f - i;
            ivec2 p = ivec2(i);
            float top = mix(code16(t, p, mx), code16(t, p + ivec2(1, 0), mx), w.x);
            float bottom = mix(code16(t, p + ivec2(0, 1), mx), code16(t, p + ivec2(1, 1), mx), w.x);
            return mix(top, bottom, w.y) * sampleScale;
        }
        vec3 sourceAt(vec2 s) {
            vec2 cc = s * chromaScale + chromaBias;
            return vec3(code16(texY, ivec2(s), lumaMax) * sampleScale, bilinear16(texU, cc, chromaMax), bilinear16(texV, cc, chromaMax));
        }
        vec3 sourceBetween(vec2 s) {
            vec2 cc = s * chromaScale + chromaBias;
            return vec3(bilinear16(texY, s, lumaMax), bilinear16(texU, cc, chromaMax), bilinear16(texV, cc, chromaMax));
        }

        """
    }

    /// `glsl` (a shader that includes `sourceUniforms`) for sources of `bits` per sample: itself for
    /// 8 bits, so 8-bit outputs stay as they were; the 16-bit sampling otherwise.
    static func forDepth(_ glsl: String, bits: Int) -> String {
        guard bits > 8 else { return glsl }
        precondition(glsl.ranges(of: sourceSampling8).count == 1, "a source shader includes the sampling once")
        return glsl.replacing(sourceSampling8, with: sourceSampling16(bits: bits))
    }

    /// Source sampling, colour conversion and the fused point-filter chain (`filtered`), for the
    /// passes that go straight from source planes to output planes.
    static func prelude(_ filters: [FilterInstance], color: SourceColorShader, roundTo8Bits: Bool = true) -> String {
        let (declarations, calls) = FilterCodegen.pointChain(filters.enumerated().map { ("f\($0)_", $1) }, roundTo8Bits: roundTo8Bits)
        return ChainRenderer.header + sourceUniforms + color.glsl + declarations + """
        // uv: where the pixel is in the output, (0, 0) top-left to (1, 1) bottom-right.
        vec4 filtered(vec3 yuv, vec2 uv) {
            vec4 c = vec4(sourceRGB(yuv), 1.0);
        \(calls)    return c;
        }

        """
    }

    /// Four horizontally adjacent output pixels per fragment: a quarter of the fragments, and the
    /// RGBA8 result is already the bytes of the Y plane.
    static let directLumaMain = """
    out vec4 fragColor;
    float lumaAt(vec2 o) {
        vec2 s = clamp(srcFromOut * o + srcOffset, vec2(0.5), lumaSize - 0.5);
        return (rgbToYuv * filtered(sourceAt(s), o / outSize).rgb).x + outOffset.x;
    }
    void main() {
        vec2 o = vec2(floor(gl_FragCoord.x) * 4.0 + 0.5, gl_FragCoord.y);
        fragColor = vec4(lumaAt(o), lumaAt(o + vec2(1.0, 0.0)), lumaAt(o + vec2(2.0, 0.0)), lumaAt(o + vec2(3.0, 0.0)));
    }
    """

    /// Left-sited 4:2:0 chroma: [1/4, 1/2, 1/4] across columns 2i-1..2i+1, the average of rows
    /// 2j and 2j+1, as two taps at the corners (2i, 2j+1) and (2i+1, 2j+1).
    static let directChromaMain = """
    layout(location = 0) out float cb;
    layout(location = 1) out float cr;
    void main() {
        vec2 p = gl_FragCoord.xy * 2.0;
        vec3 rgb = 0.5 * (filtered(sourceBetween(srcFromOut * (p - vec2(1.0, 0.0)) + srcOffset), (p - vec2(1.0, 0.0)) / outSize).rgb
                        + filtered(sourceBetween(srcFromOut * p + srcOffset), p / outSize).rgb);
        vec3 yuv = rgbToYuv * rgb + outOffset;
        cb = yuv.y;
        cr = yuv.z;
    }
    """

    /// The packed pass (upright 4:2:0): each fragment shades a 4x2 block of pixels and writes its
    /// eight Y samples (even and odd row to two targets, four per texel: the plane's bytes) and its
    /// two Cb and two Cr samples as one texel of an NV12 CbCr plane (x264's own layout). The chroma samples average the block's own filtered pixels plus
    /// the column to its left, the same left-sited [1/4 1/2 1/4] x [1/2 1/2] taps as
    /// `chromaFromRGBA`, so this single pass equals the RGBA path up to rounding. Sources come packed
    /// four samples per texel; chroma is interpolated by hand exactly as bilinear sampling would
    /// (left-sited columns, rows weighted 3/4 and 1/4).
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
    // Per-pixel chroma for columns 4q-1 .. 4q+3 from columns 2q-1 .. 2q+2.
    void spread(vec4 c, out float p[5]) {
        p[0] = 0.5 * (c.x + c.y); p[1] = c.y; p[2] = 0.5 * (c.y + c.z); p[3] = c.z; p[4] = 0.5 * (c.z + c.w);
    }
    void main() {
        int q = int(gl_FragCoord.x);
        int m = int(gl_FragCoord.y);
        int up = max(m - 1, 0);
        int down = min(m + 1, chromaMax.y);
        vec4 um = chromaCols(texU, q, m);
        vec4 vm = chromaCols(texV, q, m);
        float u0[5]; float v0[5]; float u1[5]; float v1[5];
        spread(0.75 * um + 0.25 * chromaCols(texU, q, up), u0);
        spread(0.75 * vm + 0.25 * chromaCols(texV, q, up), v0);
        spread(0.75 * um + 0.25 * chromaCols(texU, q, down), u1);
        spread(0.75 * vm + 0.25 * chromaCols(texV, q, down), v1);
        vec4 l0 = fetch4(texY, ivec2(q, 2 * m));
        vec4 l1 = fetch4(texY, ivec2(q, 2 * m + 1));
        float left0 = q == 0 ? l0.x : fetch4(texY, ivec2(q - 1, 2 * m)).w;
        float left1 = q == 0 ? l1.x : fetch4(texY, ivec2(q - 1, 2 * m + 1)).w;
        float y0[5] = float[5](left0, l0.x, l0.y, l0.z, l0.w);
        float y1[5] = float[5](left1, l1.x, l1.y, l1.z, l1.w);
        vec3 top[5];
        vec3 bottom[5];
        for (int k = 0; k < 5; k++) {
            float x = float(4 * q + k) - 0.5;
            top[k] = filtered(vec3(y0[k], u0[k], v0[k]), vec2(x, float(2 * m) + 0.5) / outSize).rgb;
            bottom[k] = filtered(vec3(y1[k], u1[k], v1[k]), vec2(x, float(2 * m) + 1.5) / outSize).rgb;
        }
        writeBlock(top, bottom);
    }
    """

    /// RGBA (the end of a chain) to NV12: each fragment converts a 4x2 block, with the same
    /// left-sited [1/4 1/2 1/4] x [1/2 1/2] chroma taps as `chromaFromRGBA` (the block's pixels plus
    /// the column to its left).
    static let nv12FromRGBA = """
    #version 300 es
    precision highp float;
    precision highp int;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    uniform ivec2 rgbaMax;
    """ + nv12Block + """
    void main() {
        int q = int(gl_FragCoord.x);
        int m = int(gl_FragCoord.y);
        int r0 = min(2 * m, rgbaMax.y);
        int r1 = min(2 * m + 1, rgbaMax.y);
        vec3 top[5];
        vec3 bottom[5];
        for (int k = 0; k < 5; k++) {
            int x = clamp(4 * q - 1 + k, 0, rgbaMax.x);
            top[k] = texelFetch(rgbaTex, ivec2(x, r0), 0).rgb;
            bottom[k] = texelFetch(rgbaTex, ivec2(x, r1), 0).rgb;
        }
        writeBlock(top, bottom);
    }
    """

    /// The NV12 writer both single-pass shaders share. A fragment owns a 4x2 block; `top` and
    /// `bottom` are the RGB of its two rows at columns 4q-1 .. 4q+3 (the column to the left feeds
    /// chroma only). Eight Y samples go to two RGBA8 targets (even and odd rows: the plane's bytes),
    /// and the two left-sited chroma samples, [1/4 1/2 1/4] across x [1/2 1/2] down, as one CbCr
    /// texel. Needs `rgbToYuv` and `outOffset`.
    static let nv12Block = """
    layout(location = 0) out vec4 yEven;
    layout(location = 1) out vec4 yOdd;
    layout(location = 2) out vec4 cbcr;
    void writeBlock(vec3 top[5], vec3 bottom[5]) {
        vec4 even;
        vec4 odd;
        for (int k = 1; k < 5; k++) {
            even[k - 1] = (rgbToYuv * top[k]).x + outOffset.x;
            odd[k - 1] = (rgbToYuv * bottom[k]).x + outOffset.x;
        }
        yEven = even;
        yOdd = odd;
        vec3 s0 = top[0] + bottom[0], s1 = top[1] + bottom[1], s2 = top[2] + bottom[2];
        vec3 s3 = top[3] + bottom[3], s4 = top[4] + bottom[4];
        vec3 c0 = rgbToYuv * (0.125 * s0 + 0.25 * s1 + 0.125 * s2) + outOffset;
        vec3 c1 = rgbToYuv * (0.125 * s2 + 0.25 * s3 + 0.125 * s4) + outOffset;
        cbcr = vec4(c0.yz, c1.yz);
    }

    """

    static let lumaFromRGBA = """
    #version 300 es
    precision highp float;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    out float y;
    void main() {
        vec3 rgb = texelFetch(rgbaTex, ivec2(gl_FragCoord.xy), 0).rgb;
        y = (rgbToYuv * rgb).x + outOffset.x;
    }
    """

    /// The same left-sited taps as the direct path, on the filtered RGBA picture.
    static let chromaFromRGBA = """
    #version 300 es
    precision highp float;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 outOffset;
    uniform vec2 texelSize;
    layout(location = 0) out float cb;
    layout(location = 1) out float cr;
    void main() {
        vec2 p = gl_FragCoord.xy * 2.0;
        vec3 rgb = 0.5 * (texture(rgbaTex, (p - vec2(1.0, 0.0)) * texelSize).rgb + texture(rgbaTex, p * texelSize).rgb);
        vec3 yuv = rgbToYuv * rgb + outOffset;
        cb = yuv.y;
        cr = yuv.z;
    }
    """
}
