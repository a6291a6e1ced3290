import GPUEncodeFilters

// The GLSL that reads the video's source planes: their uniforms, 8-bit and 16-bit sampling, the
// exact and gathered bilinear chroma, and the readers every source pass starts from.
extension FrameRenderer {
    /// The source planes and how to sample them (`SourceSampling`); shared by the fused passes and
    /// the chain's first pass.
    static func sourceUniforms(_ sampling: SourceSampling = SourceSampling(bits: 8)) -> String {
        sourceUniformDeclarations + sampling.glsl
    }

    static let sourceUniformDeclarations = """
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

    """

    /// 8-bit planes: R8 textures sampled bilinearly by the GPU's texture unit (or RGBA8, four samples
    /// a texel, for the packed pass, which reads them through `fetch4` and interpolates by hand).
    static func sourceSampling8(_ bilinear: String) -> String {
        """
    #define SourceSampler highp sampler2D
    uniform highp sampler2D texY;
    uniform highp sampler2D texU;
    uniform highp sampler2D texV;
    vec4 fetch4(highp sampler2D t, ivec2 p) { return texelFetch(t, p, 0); }
    float sampleAt(highp sampler2D t, ivec2 p, ivec2 mx) { return texelFetch(t, clamp(p, ivec2(0), mx), 0).r; }
    """ + bilinear + sourceReaders
    }

    /// 8-bit bilinear sampling by the texture unit: one fetch, but with 8-bit weights and results on
    /// llvmpipe (up to half a code value off), which the chroma downsampling passes on. The per-plane
    /// passes use it; a chain's first pass swaps in `exactBilinear` (`exactSampling`): a blur after
    /// it would spread the error, and that pass reads each pixel once.
    static let hardwareBilinear = """
    // c: a position in texels (centres at i + 0.5); mx + 1 is the plane's size.
    float bilinear(highp sampler2D t, vec2 c, ivec2 mx) { return texture(t, c / vec2(mx + 1)).r; }

    """

    static let exactBilinear = """
    // c: a position in texels (centres at i + 0.5), clamped to the edge as GL_CLAMP_TO_EDGE does.
    float bilinear(SourceSampler t, vec2 c, ivec2 mx) {
        vec2 f = c - 0.5;
        vec2 i = floor(f);
        vec2 w = f - i;
        ivec2 p = ivec2(i);
        float top = mix(sampleAt(t, p, mx), sampleAt(t, p + ivec2(1, 0), mx), w.x);
        float bottom = mix(sampleAt(t, p + ivec2(0, 1), mx), sampleAt(t, p + ivec2(1, 1), mx), w.x);
        return mix(top, bottom, w.y);
    }

    """

    /// `exactBilinear` with one `textureGather` a plane instead of four `texelFetch`es (OpenGL ES
    /// 3.1, `#version 310 es`): the same four samples and the same arithmetic, so the same values,
    /// at a third of the fetches of the chain's first pass (on llvmpipe the exact chroma was most of
    /// that pass's time, and the pass most of a scaled run's). The 2x2 block is gathered at its
    /// shared corner, half a texel from where the GPU's rounding could pick another block;
    /// CLAMP_TO_EDGE repeats the edge as `sampleAt`'s clamp does.
    static func gatheredBilinear(deep: Bool) -> String {
        let gather = deep ? "vec4(textureGather(t, uv)) * sampleScale" : "textureGather(t, uv)"
        return """
        float bilinear(SourceSampler t, vec2 c, ivec2 mx) {
            vec2 f = c - 0.5;
            vec2 i = floor(f);
            vec2 w = f - i;
            vec2 uv = (i + 1.0) / vec2(mx + 1);
            vec4 g = \(gather);
            return mix(mix(g.w, g.z, w.x), mix(g.x, g.y, w.x), w.y);
        }

        """
    }

    /// The video source's `vec4 sourceQuad(vec2 corner)` (`ChainSource.quadGLSL`), over a chain source
    /// made by `gatheredSampling` (`gathers`) or `exactSampling`: the four luma samples around the
    /// corner, each converted with the chroma interpolated at their centre, and averaged. why:
    /// converting each pixel keeps the conversion's clamp per pixel (clamping the mean instead left
    /// saturated testsrc2 edges 3.8 code values off after a sigma-8 blur); the chroma is shared
    /// because it changes little within two pixels. Not for linear light, whose conversion is far
    /// from linear. `deep`: 16-bit integer planes (`sampleScale`).
    static func sourceQuad(gathers: Bool, deep: Bool) -> String {
        // One gather where the source has them (ES 3.1), else four fetches; the same four samples,
        // clamped to the plane as the texture's CLAMP_TO_EDGE and `sampleAt` clamp.
        let luma = gathers ? "vec4 y = \(deep ? "vec4(textureGather(texY, s / lumaSize)) * sampleScale" : "textureGather(texY, s / lumaSize)");" : """
        ivec2 i = ivec2(floor(s - 0.5));
            vec4 y = vec4(sampleAt(texY, i, lumaMax), sampleAt(texY, i + ivec2(1, 0), lumaMax),
                          sampleAt(texY, i + ivec2(0, 1), lumaMax), sampleAt(texY, i + ivec2(1, 1), lumaMax));
        """
        return """
        vec4 sourceQuad(vec2 p) {
            vec2 s = srcFromOut * p + srcOffset;
            \(luma)
            vec2 cc = clamp(s, vec2(0.5), lumaSize - 0.5) * chromaScale + chromaBias;
            vec2 uv = vec2(bilinear(texU, cc, chromaMax), bilinear(texV, cc, chromaMax));
            vec3 c = sourceRGB(vec3(y.x, uv)) + sourceRGB(vec3(y.y, uv)) + sourceRGB(vec3(y.z, uv)) + sourceRGB(vec3(y.w, uv));
            return vec4(c * 0.25, 1.0);
        }

        """
    }

    /// The two source readers, over `sampleAt` (one sample, clamped to the plane) and `bilinear`.
    static let sourceReaders = """
    // s: a source pixel centre (pixel units).
    vec3 sourceAt(vec2 s) {
        vec2 cc = s * chromaScale + chromaBias;
        return vec3(sampleAt(texY, ivec2(s), lumaMax), bilinear(texU, cc, chromaMax), bilinear(texV, cc, chromaMax));
    }
    // s: a source pixel corner; luma is the average of the four pixels around it.
    vec3 sourceBetween(vec2 s) {
        vec2 cc = s * chromaScale + chromaBias;
        return vec3(bilinear(texY, s, lumaMax), bilinear(texU, cc, chromaMax), bilinear(texV, cc, chromaMax));
    }

    """

    /// Deep planes (9 to 16 bits): R16UI textures (RGBA16UI for the packed pass), read with
    /// texelFetch (GLES 3.0 cannot filter integer textures). Every fetch returns
    /// code / (255 * 2^(bits-8)): 10-bit 64 is 8-bit 16, so the 8-bit colour matrices hold.
    static func sourceSampling16(bits: Int, _ bilinear: String) -> String {
        """
        #define SourceSampler highp usampler2D
        uniform highp usampler2D texY;
        uniform highp usampler2D texU;
        uniform highp usampler2D texV;
        const float sampleScale = 1.0 / \(Double(255 << (bits - 8)));
        vec4 fetch4(highp usampler2D t, ivec2 p) { return vec4(texelFetch(t, p, 0)) * sampleScale; }
        float sampleAt(highp usampler2D t, ivec2 p, ivec2 mx) { return float(texelFetch(t, clamp(p, ivec2(0), mx), 0).r) * sampleScale; }

        """ + bilinear + sourceReaders
    }

}

/// How a source pass samples the planes: their depth (8 bits: R8 or RGBA8 textures; deeper: 16-bit
/// integer textures, `sourceSampling16`), and how chroma is interpolated between samples: by the
/// texture unit (`hardware`: 8-bit only, one fetch but 8-bit weights), exactly in float
/// (`exactBilinear`: four fetches), or exactly from one `textureGather` a plane (`gathered`, ES 3.1).
/// Deep textures cannot be filtered by the texture unit, so `hardware` means `exact` for them.
struct SourceSampling: Sendable {
    enum Bilinear: Sendable {
        case hardware, exact, gathered
    }

    var bits: Int
    var bilinear: Bilinear = .hardware

    var glsl: String {
        let deep = bits > 8
        let interpolation: String
        switch bilinear {
        case .hardware: interpolation = deep ? FrameRenderer.exactBilinear : FrameRenderer.hardwareBilinear
        case .exact: interpolation = FrameRenderer.exactBilinear
        case .gathered: interpolation = FrameRenderer.gatheredBilinear(deep: deep)
        }
        return deep ? FrameRenderer.sourceSampling16(bits: bits, interpolation) : FrameRenderer.sourceSampling8(interpolation)
    }
}
