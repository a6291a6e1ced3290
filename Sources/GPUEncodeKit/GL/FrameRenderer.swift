import CEGL

/// Clockwise rotation that makes the picture upright, from the stream's display matrix.
public enum Rotation: Int, Sendable {
    case none = 0, clockwise90 = 90, half = 180, clockwise270 = 270

    public var swapsDimensions: Bool { self == .clockwise90 || self == .clockwise270 }

    /// Maps output pixel centres to source pixel centres: src = A * out + b (pixel units).
    func sourceMapping(srcWidth w: Float, srcHeight h: Float) -> (a: [Float], b: (Float, Float)) {
        switch self {
        case .none: return ([1, 0, 0, 1], (0, 0))
        case .clockwise90: return ([0, 1, -1, 0], (0, h))
        case .half: return ([-1, 0, 0, -1], (w, h))
        case .clockwise270: return ([0, -1, 1, 0], (w, 0))
        }
    }
}

/// Where the picture comes from and where it goes, fixed for a whole run.
public struct RenderGeometry: Sendable {
    public var sourceWidth: Int
    public var sourceHeight: Int
    /// log2 of the chroma subsampling (1, 1 for 4:2:0).
    public var chromaShiftX: Int
    public var chromaShiftY: Int
    public var rotation: Rotation
    /// Upright and even; odd sizes lose their last column or row.
    public var outputWidth: Int
    public var outputHeight: Int

    public init(sourceWidth: Int, sourceHeight: Int, chromaShiftX: Int, chromaShiftY: Int, rotation: Rotation) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.chromaShiftX = chromaShiftX
        self.chromaShiftY = chromaShiftY
        self.rotation = rotation
        let (w, h) = rotation.swapsDimensions ? (sourceHeight, sourceWidth) : (sourceWidth, sourceHeight)
        outputWidth = w & ~1
        outputHeight = h & ~1
    }

    var chromaWidth: Int { (sourceWidth + (1 << chromaShiftX) - 1) >> chromaShiftX }
    var chromaHeight: Int { (sourceHeight + (1 << chromaShiftY) - 1) >> chromaShiftY }
}

/// One 8-bit plane in client memory.
public struct Plane {
    public var data: UnsafeMutablePointer<UInt8>
    public var stride: Int

    public init(data: UnsafeMutablePointer<UInt8>, stride: Int) {
        self.data = data
        self.stride = stride
    }
}

/// How a frame goes through the GPU.
public enum RenderPath: String, Sendable, CaseIterable {
    /// Two passes straight from the source planes: a luma pass that shades four output pixels per
    /// fragment into an RGBA8 target a quarter as wide, and a half-size chroma pass. No full-size
    /// RGBA intermediate. Chroma is computed from Y'CbCr interpolated at the 2x2 block before the
    /// filters run, which matches `viaRGBA` except at a clip boundary inside a block.
    case direct
    /// The straightforward path: source → full-size RGBA with the filter chain → Y pass → CbCr pass.
    /// Filters that sample their neighbourhood need it; it is also the reference for `direct`.
    case viaRGBA
}

/// Y'CbCr planes in, filtered BT.709 limited-range 4:2:0 planes out.
public final class FrameRenderer {
    public let geometry: RenderGeometry
    public let path: RenderPath
    private let planes: [Texture]
    private var targets: [RenderTarget] = []
    private var programs: [ShaderProgram] = []
    private var vao: GLuint = 0
    private var scratch: [UInt8] = []

    public init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], path: RenderPath = .direct) throws {
        geometry = g
        self.path = path
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        // Luma is read with texelFetch per pixel and bilinearly (2x2 averages) by the chroma pass.
        planes = [
            Texture(width: g.sourceWidth, height: g.sourceHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
            Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
            Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
        ]
        let prelude = FrameRenderer.prelude(filters)
        let (w, h) = (g.outputWidth, g.outputHeight)
        switch path {
        case .direct:
            // Upright 4:2:0 (most video) gets shaders that fetch exact texels and interpolate by
            // hand: on llvmpipe a bilinear sample costs several times a texelFetch.
            let upright420 = g.rotation == .none && g.chromaShiftX == 1 && g.chromaShiftY == 1
            targets = [
                try RenderTarget(width: (w + 3) / 4, height: h, formats: [GLenum(GL_RGBA8)]),
                try RenderTarget(width: w / 2, height: h / 2, formats: [GLenum(GL_R8), GLenum(GL_R8)]),
            ]
            programs = [
                try ShaderProgram(fragment: prelude + (upright420 ? FrameRenderer.directLuma420Main : FrameRenderer.directLumaMain),
                                  label: "luma (filters fused)"),
                try ShaderProgram(fragment: prelude + (upright420 ? FrameRenderer.directChroma420Main : FrameRenderer.directChromaMain),
                                  label: "chroma (filters fused)"),
            ]
        case .viaRGBA:
            targets = [
                try RenderTarget(width: w, height: h, formats: [GLenum(GL_RGBA8)], filter: GL_LINEAR),
                try RenderTarget(width: w, height: h, formats: [GLenum(GL_R8)]),
                try RenderTarget(width: w / 2, height: h / 2, formats: [GLenum(GL_R8), GLenum(GL_R8)]),
            ]
            programs = [
                try ShaderProgram(fragment: prelude + FrameRenderer.rgbaMain, label: "filter chain"),
                try ShaderProgram(fragment: FrameRenderer.lumaFromRGBA, label: "RGB to Y"),
                try ShaderProgram(fragment: FrameRenderer.chromaFromRGBA, label: "RGB to CbCr"),
            ]
        }
        glGenVertexArrays(1, &vao)
        glBindVertexArray(vao)

        // Uniforms never change during a run: set them once. A uniform a program does not use has
        // location -1, which GL ignores.
        let toRGB = source.toRGB()
        let fromRGB = YUVColorSpace(matrix: .bt709, fullRange: false).fromRGB()
        let map = g.rotation.sourceMapping(srcWidth: Float(g.sourceWidth), srcHeight: Float(g.sourceHeight))
        for program in programs {
            program.use()
            program.set("texY", int: 0)
            program.set("texU", int: 1)
            program.set("texV", int: 2)
            program.set("rgbaTex", int: 0)
            program.setMatrix("yuvToRgb", rows: toRGB.rows)
            program.set("yuvOffset", toRGB.offset[0], toRGB.offset[1], toRGB.offset[2])
            program.setMatrix("rgbToYuv", rows: fromRGB.rows)
            program.set("outOffset", fromRGB.offset[0], fromRGB.offset[1], fromRGB.offset[2])
            program.setMatrix("srcFromOut", rows: map.a)
            program.set("srcOffset", map.b.0, map.b.1)
            program.set("lumaSize", Float(g.sourceWidth), Float(g.sourceHeight))
            program.set("chromaScale", 1 / Float(1 << g.chromaShiftX), 1 / Float(1 << g.chromaShiftY))
            // Chroma siting: MPEG-2/H.264 "left" horizontally (co-sited with even luma columns)
            // when subsampled, centred vertically.
            program.set("chromaBias", g.chromaShiftX > 0 ? 0.25 : 0, 0)
            program.set("chromaSize", Float(g.chromaWidth), Float(g.chromaHeight))
            program.set("texelSize", 1 / Float(w), 1 / Float(h))
            glUniform2i(program.location("lumaMax"), GLint(g.sourceWidth - 1), GLint(g.sourceHeight - 1))
            glUniform2i(program.location("chromaMax"), GLint(g.chromaWidth - 1), GLint(g.chromaHeight - 1))
            for (i, f) in filters.enumerated() {
                for p in f.declaration.parameters {
                    let name = "f\(i)_\(p.name)"
                    switch f.values[p.name] ?? p.defaultValue {
                    case .float(let v): program.set(name, Float(v))
                    case .matrix4(let m): program.setMatrix(name, rows: m.map(Float.init))
                    }
                }
            }
        }
        try FrameRenderer.checkError("setting up the renderer")
    }

    deinit {
        glDeleteVertexArrays(1, &vao)
    }

    /// Renders one frame: `source` holds the Y, Cb, Cr planes; `output` receives Y, Cb, Cr.
    public func render(source: [Plane], output: [Plane]) throws {
        precondition(source.count == 3 && output.count == 3)
        for (i, t) in planes.enumerated() {
            glActiveTexture(GLenum(Int(GL_TEXTURE0) + i))
            t.upload(source[i].data, stride: source[i].stride)
        }
        switch path {
        case .direct:
            for (target, program) in zip(targets, programs) {
                target.bind()
                program.use()
                glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
            }
            targets[0].readPacked(into: output[0].data, stride: output[0].stride, width: geometry.outputWidth, scratch: &scratch)
            targets[1].readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
            targets[1].readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        case .viaRGBA:
            targets[0].bind()
            programs[0].use()
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
            glActiveTexture(GLenum(GL_TEXTURE0))
            glBindTexture(GLenum(GL_TEXTURE_2D), targets[0].textures[0].id)
            for i in 1...2 {
                targets[i].bind()
                programs[i].use()
                glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
            }
            targets[1].readPlane(0, into: output[0].data, stride: output[0].stride, scratch: &scratch)
            targets[2].readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
            targets[2].readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        }
        try FrameRenderer.checkError("rendering a frame")
    }

    static func checkError(_ what: String) throws {
        let e = glGetError()
        guard e == GL_NO_ERROR else { throw GPUEncodeError(.gpu, "OpenGL error 0x\(String(e, radix: 16)) while \(what)") }
    }

    /// Source sampling, colour conversion and the fused filter chain, shared by every pass that
    /// reads the source. Each filter's result is clamped as if it had been written to an 8-bit
    /// texture, so fusing does not change the look compared with one pass per filter (GPUImage).
    static func prelude(_ filters: [FilterInstance]) -> String {
        var functions = ""
        var calls = ""
        for (i, f) in filters.enumerated() {
            let prefix = "f\(i)_"
            functions += f.declaration.glsl.replacingAll("{{p}}", with: prefix) + "\n"
            calls += "    c = clamp(\(prefix)apply(c), 0.0, 1.0);\n"
        }
        return """
        #version 300 es
        precision highp float;
        precision highp int;
        uniform highp sampler2D texY;
        uniform highp sampler2D texU;
        uniform highp sampler2D texV;
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
        \(functions)
        vec4 filtered(vec3 yuv) {
            vec4 c = vec4(clamp(yuvToRgb * yuv + yuvOffset, 0.0, 1.0), 1.0);
        \(calls)    return c;
        }
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
    }

    static let rgbaMain = """
    out vec4 fragColor;
    void main() {
        fragColor = filtered(sourceAt(srcFromOut * gl_FragCoord.xy + srcOffset));
    }
    """

    /// Four horizontally adjacent output pixels per fragment: a quarter of the fragments, and the
    /// RGBA8 result is already the bytes of the Y plane.
    static let directLumaMain = """
    out vec4 fragColor;
    float lumaAt(vec2 o) {
        vec2 s = clamp(srcFromOut * o + srcOffset, vec2(0.5), lumaSize - 0.5);
        return (rgbToYuv * filtered(sourceAt(s)).rgb).x + outOffset.x;
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
        vec3 rgb = 0.5 * (filtered(sourceBetween(srcFromOut * (p - vec2(1.0, 0.0)) + srcOffset)).rgb
                        + filtered(sourceBetween(srcFromOut * p + srcOffset)).rgb);
        vec3 yuv = rgbToYuv * rgb + outOffset;
        cb = yuv.y;
        cr = yuv.z;
    }
    """

    /// `directLumaMain` for upright 4:2:0: the four pixels share three chroma columns and two
    /// chroma rows, fetched once and interpolated exactly as bilinear sampling would
    /// (left-sited columns, centred rows: weights 1/4 and 3/4 vertically).
    static let directLuma420Main = """
    out vec4 fragColor;
    float Y(int x, int y) { return texelFetch(texY, min(ivec2(x, y), lumaMax), 0).r; }
    vec2 UV(int x, int y) {
        ivec2 c = clamp(ivec2(x, y), ivec2(0), chromaMax);
        return vec2(texelFetch(texU, c, 0).r, texelFetch(texV, c, 0).r);
    }
    float lumaOf(float y, vec2 uv) { return (rgbToYuv * filtered(vec3(y, uv)).rgb).x + outOffset.x; }
    void main() {
        int q = int(gl_FragCoord.x);
        int y = int(gl_FragCoord.y);
        int m = y >> 1;
        int other = (y & 1) == 1 ? m + 1 : m - 1;
        int c0 = 2 * q;
        vec2 uv0 = 0.75 * UV(c0, m) + 0.25 * UV(c0, other);
        vec2 uv1 = 0.75 * UV(c0 + 1, m) + 0.25 * UV(c0 + 1, other);
        vec2 uv2 = 0.75 * UV(c0 + 2, m) + 0.25 * UV(c0 + 2, other);
        int x = 4 * q;
        fragColor = vec4(lumaOf(Y(x, y), uv0), lumaOf(Y(x + 1, y), 0.5 * (uv0 + uv1)),
                         lumaOf(Y(x + 2, y), uv1), lumaOf(Y(x + 3, y), 0.5 * (uv1 + uv2)));
    }
    """

    /// `directChromaMain` for upright 4:2:0 with exact texel fetches: luma from the six pixels
    /// under the two taps, chroma from three neighbouring samples of the same row.
    static let directChroma420Main = """
    layout(location = 0) out float cb;
    layout(location = 1) out float cr;
    float Y(int x, int y) { return texelFetch(texY, clamp(ivec2(x, y), ivec2(0), lumaMax), 0).r; }
    vec2 UV(int x, int y) {
        ivec2 c = clamp(ivec2(x, y), ivec2(0), chromaMax);
        return vec2(texelFetch(texU, c, 0).r, texelFetch(texV, c, 0).r);
    }
    void main() {
        int i = int(gl_FragCoord.x);
        int j = int(gl_FragCoord.y);
        float ya = Y(2 * i - 1, 2 * j) + Y(2 * i - 1, 2 * j + 1);
        float yb = Y(2 * i, 2 * j) + Y(2 * i, 2 * j + 1);
        float yc = Y(2 * i + 1, 2 * j) + Y(2 * i + 1, 2 * j + 1);
        vec2 u0 = UV(i - 1, j);
        vec2 u1 = UV(i, j);
        vec2 u2 = UV(i + 1, j);
        vec3 rgb = 0.5 * (filtered(vec3(0.25 * (ya + yb), 0.25 * u0 + 0.75 * u1)).rgb
                        + filtered(vec3(0.25 * (yb + yc), 0.75 * u1 + 0.25 * u2)).rgb);
        vec3 yuv = rgbToYuv * rgb + outOffset;
        cb = yuv.y;
        cr = yuv.z;
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

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
