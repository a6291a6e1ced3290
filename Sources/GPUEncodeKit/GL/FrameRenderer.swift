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

/// Y'CbCr planes in, filtered BT.709 limited-range 4:2:0 planes out. Three passes:
/// source YUV → upright RGBA with the fused filter chain; RGBA → Y; RGBA → Cb and Cr at half size.
public final class FrameRenderer {
    public let geometry: RenderGeometry
    private let planes: [Texture]
    private let rgba: RenderTarget
    private let luma: RenderTarget
    private let chroma: RenderTarget
    private let filterProgram: ShaderProgram
    private let lumaProgram: ShaderProgram
    private let chromaProgram: ShaderProgram
    private var vao: GLuint = 0
    private var scratch: [UInt8] = []

    public init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance]) throws {
        geometry = g
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        planes = [
            Texture(width: g.sourceWidth, height: g.sourceHeight, format: GLenum(GL_R8), filter: GL_NEAREST),
            Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
            Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
        ]
        rgba = try RenderTarget(width: g.outputWidth, height: g.outputHeight, formats: [GLenum(GL_RGBA8)], filter: GL_LINEAR)
        luma = try RenderTarget(width: g.outputWidth, height: g.outputHeight, formats: [GLenum(GL_R8)])
        chroma = try RenderTarget(width: g.outputWidth / 2, height: g.outputHeight / 2, formats: [GLenum(GL_R8), GLenum(GL_R8)])
        filterProgram = try ShaderProgram(fragment: FrameRenderer.filterShader(filters), label: "filter chain")
        lumaProgram = try ShaderProgram(fragment: FrameRenderer.lumaShader, label: "RGB to Y")
        chromaProgram = try ShaderProgram(fragment: FrameRenderer.chromaShader, label: "RGB to CbCr")
        glGenVertexArrays(1, &vao)
        glBindVertexArray(vao)

        // Uniforms never change during a run: set them once.
        filterProgram.use()
        filterProgram.set("texY", int: 0)
        filterProgram.set("texU", int: 1)
        filterProgram.set("texV", int: 2)
        let toRGB = source.toRGB()
        filterProgram.setMatrix("yuvToRgb", rows: toRGB.rows)
        filterProgram.set("yuvOffset", toRGB.offset[0], toRGB.offset[1], toRGB.offset[2])
        let map = g.rotation.sourceMapping(srcWidth: Float(g.sourceWidth), srcHeight: Float(g.sourceHeight))
        filterProgram.setMatrix("srcFromOut", rows: map.a)
        filterProgram.set("srcOffset", map.b.0, map.b.1)
        filterProgram.set("chromaScale", 1 / Float(1 << g.chromaShiftX), 1 / Float(1 << g.chromaShiftY))
        // Chroma siting: MPEG-2/H.264 "left" horizontally (co-sited with even luma columns) when
        // subsampled, centred vertically.
        filterProgram.set("chromaBias", g.chromaShiftX > 0 ? 0.25 : 0, 0)
        filterProgram.set("chromaSize", Float(g.chromaWidth), Float(g.chromaHeight))
        for (i, f) in filters.enumerated() {
            for p in f.declaration.parameters {
                let name = "f\(i)_\(p.name)"
                switch f.values[p.name] ?? p.defaultValue {
                case .float(let v): filterProgram.set(name, Float(v))
                case .matrix4(let m): filterProgram.setMatrix(name, rows: m.map(Float.init))
                }
            }
        }
        let fromRGB = YUVColorSpace(matrix: .bt709, fullRange: false).fromRGB()
        for program in [lumaProgram, chromaProgram] {
            program.use()
            program.set("rgbaTex", int: 0)
            program.setMatrix("rgbToYuv", rows: fromRGB.rows)
            program.set("yuvOffset", fromRGB.offset[0], fromRGB.offset[1], fromRGB.offset[2])
        }
        chromaProgram.set("texelSize", 1 / Float(g.outputWidth), 1 / Float(g.outputHeight))
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
        rgba.bind()
        filterProgram.use()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)

        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), rgba.textures[0].id)
        luma.bind()
        lumaProgram.use()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        chroma.bind()
        chromaProgram.use()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)

        luma.readPlane(0, into: output[0].data, stride: output[0].stride, scratch: &scratch)
        chroma.readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
        chroma.readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        try FrameRenderer.checkError("rendering a frame")
    }

    static func checkError(_ what: String) throws {
        let e = glGetError()
        guard e == GL_NO_ERROR else { throw GPUEncodeError(.gpu, "OpenGL error 0x\(String(e, radix: 16)) while \(what)") }
    }

    /// The fused pass: fetch and convert the source pixel, then apply each filter in order.
    /// Every filter's result is clamped as if it had been written to an 8-bit texture, so fusing
    /// does not change the look compared with one pass per filter.
    static func filterShader(_ filters: [FilterInstance]) -> String {
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
        uniform mat2 srcFromOut;
        uniform vec2 srcOffset;
        uniform vec2 chromaScale;
        uniform vec2 chromaBias;
        uniform vec2 chromaSize;
        out vec4 fragColor;
        \(functions)
        void main() {
            vec2 s = srcFromOut * gl_FragCoord.xy + srcOffset;
            float y = texelFetch(texY, ivec2(s), 0).r;
            vec2 cpos = (s * chromaScale + chromaBias) / chromaSize;
            vec3 yuv = vec3(y, texture(texU, cpos).r, texture(texV, cpos).r);
            vec4 c = vec4(clamp(yuvToRgb * yuv + yuvOffset, 0.0, 1.0), 1.0);
        \(calls)    fragColor = c;
        }
        """
    }

    static let lumaShader = """
    #version 300 es
    precision highp float;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 yuvOffset;
    out float y;
    void main() {
        vec3 rgb = texelFetch(rgbaTex, ivec2(gl_FragCoord.xy), 0).rgb;
        y = (rgbToYuv * rgb).x + yuvOffset.x;
    }
    """

    /// One bilinear tap at the corner shared by a 2x2 block averages the block.
    static let chromaShader = """
    #version 300 es
    precision highp float;
    uniform highp sampler2D rgbaTex;
    uniform mat3 rgbToYuv;
    uniform vec3 yuvOffset;
    uniform vec2 texelSize;
    layout(location = 0) out float cb;
    layout(location = 1) out float cr;
    void main() {
        vec2 p = gl_FragCoord.xy * 2.0;
        vec3 rgb = 0.5 * (texture(rgbaTex, vec2(p.x - 1.0, p.y) * texelSize).rgb + texture(rgbaTex, p * texelSize).rgb);
        vec3 yuv = rgbToYuv * rgb + yuvOffset;
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
