import CEGL
import GPUEncodeCore
import GPUEncodeFilters

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
    /// The source turned upright and made even (odd sizes lose their last column or row): what the
    /// filter chain starts from.
    public var uprightWidth: Int
    public var uprightHeight: Int
    /// What the filter chain makes of it (geometry filters change it), made even for 4:2:0.
    public var outputWidth: Int
    public var outputHeight: Int

    public init(sourceWidth: Int, sourceHeight: Int, chromaShiftX: Int, chromaShiftY: Int, rotation: Rotation,
                filters: [FilterInstance] = []) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.chromaShiftX = chromaShiftX
        self.chromaShiftY = chromaShiftY
        self.rotation = rotation
        let (w, h) = rotation.swapsDimensions ? (sourceHeight, sourceWidth) : (sourceWidth, sourceHeight)
        uprightWidth = w & ~1
        uprightHeight = h & ~1
        let (cw, ch) = ChainRenderer.outputSize(of: filters, width: uprightWidth, height: uprightHeight)
        outputWidth = max(2, cw & ~1)
        outputHeight = max(2, ch & ~1)
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
    /// Chains of point filters: straight from the source planes to the output planes with the
    /// filters fused, no full-size RGBA intermediate (one pass for upright 4:2:0, a luma pass
    /// shading four pixels per fragment and a half-size chroma pass otherwise). Chains with
    /// sampling filters (blurs, geometry) go through RGBA textures as `viaRGBA` does.
    case direct
    /// The straightforward path: source → full-size RGBA with the filter chain → Y pass → CbCr pass.
    /// The reference for `direct`.
    case viaRGBA
    /// GPUImage's way, for tests: one pass per filter through 8-bit RGBA textures, the reference
    /// that fusing filters into one shader must match.
    case unfused
}

/// Y'CbCr planes in, filtered BT.709 limited-range 4:2:0 planes out.
public final class FrameRenderer {
    public let geometry: RenderGeometry
    public let path: RenderPath
    public var writesNV12: Bool { nv12 != nil }
    private let planes: [Texture]
    /// Source planes uploaded four samples per RGBA8 texel (the fused single pass reads them so).
    private let packed: Bool
    /// The three-attachment target (even Y rows, odd Y rows, CbCr) read back as NV12: the fused
    /// single pass's, or the packed conversion at the end of a chain.
    private var nv12: RenderTarget?
    /// The fused single program (or luma + chroma programs) when the chain needs no intermediate.
    private var fast: [(program: ShaderProgram, target: RenderTarget, bindings: FilterBindings)] = []
    /// Otherwise: the chain through RGBA textures, then its conversion to Y and CbCr.
    private var chain: ChainRenderer?
    private var conversion: [(program: ShaderProgram, target: RenderTarget)] = []
    private var vao: GLuint = 0
    private var scratch: [UInt8] = []
    /// Frames rendered so far.
    public private(set) var frameIndex = 0
    /// The passes this renderer runs, one line each (what `-v` prints; `passPlan` predicts them).
    public private(set) var passes: [String] = []
    /// The last frame's measurements (`averageColor`), in chain order.
    public var statistics: [(name: String, value: [Double])] { chain?.statistics ?? [] }

    /// Pixel buffer objects for the single-pass path's transfers (set on hardware GPUs).
    private let transfers: TransferBuffers?
    /// Readbacks queued by `submit` and not yet collected: which set of read buffers holds each.
    private var pendingReads: [Int] = []
    private var nextReadSet = 0
    /// Two sets of read buffers: frame N's readback is still in flight while frame N+1 is drawn.
    static let readSets = 2

    /// Whether `submit`/`collect` overlap one frame's readback with the next frame's work
    /// (pixel buffer objects on the single-pass path); otherwise use `render`.
    public var canPipeline: Bool { transfers != nil }
    /// Frames submitted and not yet collected.
    public var pendingFrames: Int { pendingReads.count }

    /// `limits`: the current context's, unless a test plans for another GPU.
    public init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], path: RenderPath = .direct,
                pixelBuffers: Bool = false, copyThreads: Int? = nil, limits: GPULimits? = nil) throws {
        geometry = g
        self.path = path
        let limits = limits ?? GPULimits.current()
        try ChainRenderer.checkSize(g.sourceWidth, g.sourceHeight, limits: limits, of: .input)
        try ChainRenderer.checkSize(g.outputWidth, g.outputHeight, limits: limits, of: .preset(filters.first?.context.origin))
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        // A point chain too big for one shader goes through the chain's passes, which split it.
        let direct = FrameRenderer.usesFusedPass(filters, path: path, limits: limits)
        // Upright 4:2:0 (most video) takes the packed path: planes as RGBA8 textures a quarter as
        // wide, four samples per fetch, four outputs per fragment. On llvmpipe a fetch costs far
        // more than the arithmetic around it.
        packed = direct && FrameRenderer.isUpright420(g)
        if direct && !filters.isEmpty { passes = [FrameRenderer.fusedPassLine(filters)] }
        let writesNV12 = FrameRenderer.writesNV12(g, path: path, filters: filters)
        transfers = writesNV12 && pixelBuffers ? TransferBuffers(count: 3 + 3 * FrameRenderer.readSets, copyThreads: copyThreads) : nil
        if packed {
            planes = [
                Texture(width: (g.sourceWidth + 3) / 4, height: g.sourceHeight, format: GLenum(GL_RGBA8), filter: GL_NEAREST),
                Texture(width: (g.chromaWidth + 3) / 4, height: g.chromaHeight, format: GLenum(GL_RGBA8), filter: GL_NEAREST),
                Texture(width: (g.chromaWidth + 3) / 4, height: g.chromaHeight, format: GLenum(GL_RGBA8), filter: GL_NEAREST),
            ]
        } else {
            // Luma is read with texelFetch per pixel and bilinearly (2x2 averages) by the chroma pass.
            planes = [
                Texture(width: g.sourceWidth, height: g.sourceHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
                Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
                Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(GL_R8), filter: GL_LINEAR),
            ]
        }
        glGenVertexArrays(1, &vao)
        glBindVertexArray(vao)

        let toRGB = source.toRGB()
        let fromRGB = YUVColorSpace(matrix: .bt709, fullRange: false).fromRGB()
        let map = g.rotation.sourceMapping(srcWidth: Float(g.sourceWidth), srcHeight: Float(g.sourceHeight))
        let (w, h) = (g.outputWidth, g.outputHeight)
        // Uniforms never change during a run: set them once. A uniform a program does not use has
        // location -1, which GL ignores.
        let planeTextures = planes
        func setUp(_ program: ShaderProgram) {
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
            program.set("outSize", Float(w), Float(h))
            glUniform2i(program.location("lumaMax"), GLint(g.sourceWidth - 1), GLint(g.sourceHeight - 1))
            glUniform2i(program.location("chromaMax"), GLint(g.chromaWidth - 1), GLint(g.chromaHeight - 1))
            glUniform2i(program.location("texelMax"), GLint(planeTextures[0].width - 1), GLint(planeTextures[1].width - 1))
        }

        if direct {
            let owners = filters.enumerated().flatMap { FilterCodegen.uniformOwners($1, prefix: "f\($0)_") }
            let prelude = FrameRenderer.prelude(filters)
            var resources: [String: [String: ResourceTexture]] = [:]
            var made: [(ShaderProgram, RenderTarget)] = []
            if packed {
                made = [(try ShaderProgram(fragment: prelude + FrameRenderer.packedBlockMain, label: "Y'CbCr (filters fused)"),
                         try RenderTarget(width: (w + 3) / 4, height: h / 2, formats: [GLenum(GL_RGBA8), GLenum(GL_RGBA8), GLenum(GL_RGBA8)]))]
            } else {
                made = [
                    (try ShaderProgram(fragment: prelude + FrameRenderer.directLumaMain, label: "luma (filters fused)"),
                     try RenderTarget(width: (w + 3) / 4, height: h, formats: [GLenum(GL_RGBA8)])),
                    (try ShaderProgram(fragment: prelude + FrameRenderer.directChromaMain, label: "chroma (filters fused)"),
                     try RenderTarget(width: w / 2, height: h / 2, formats: [GLenum(GL_R8), GLenum(GL_R8)])),
                ]
            }
            for (program, target) in made {
                setUp(program)
                fast.append((program, target, try FilterBindings(program: program, owners: owners, resources: &resources,
                                                                 inputSize: (g.uprightWidth, g.uprightHeight))))
            }
            if packed { nv12 = made[0].1 }
        } else {
            let chainSource = ChainSource(glsl: FrameRenderer.chainSourceGLSL, width: g.uprightWidth, height: g.uprightHeight, setUp: setUp)
            let chain = try ChainRenderer(source: chainSource, filters: filters, fuse: path != .unfused, limits: limits)
            self.chain = chain
            passes = chain.chainPlan.description
            if writesNV12 {
                // One pass from the chain's RGBA to NV12, a 4x2 block per fragment.
                let program = try ShaderProgram(fragment: FrameRenderer.nv12FromRGBA, label: "RGB to NV12")
                let target = try RenderTarget(width: (w + 3) / 4, height: h / 2, formats: [GLenum(GL_RGBA8), GLenum(GL_RGBA8), GLenum(GL_RGBA8)])
                setUp(program)
                glUniform2i(program.location("rgbaMax"), GLint(chain.outputWidth - 1), GLint(chain.outputHeight - 1))
                conversion = [(program, target)]
                nv12 = target
            } else {
            conversion = [
                (try ShaderProgram(fragment: FrameRenderer.lumaFromRGBA, label: "RGB to Y"),
                 try RenderTarget(width: w, height: h, formats: [GLenum(GL_R8)])),
                (try ShaderProgram(fragment: FrameRenderer.chromaFromRGBA, label: "RGB to CbCr"),
                 try RenderTarget(width: w / 2, height: h / 2, formats: [GLenum(GL_R8), GLenum(GL_R8)])),
            ]
            for (program, _) in conversion {
                setUp(program)
                program.set("texelSize", 1 / Float(chain.outputWidth), 1 / Float(chain.outputHeight))
            }
            }
        }
        try FrameRenderer.checkError("setting up the renderer")
    }

    deinit {
        glDeleteVertexArrays(1, &vao)
    }

    /// The first pass of a chain over video: the source planes, converted to RGB.
    static let chainSourceGLSL = sourceUniforms + """
    vec4 sourcePixel(vec2 p) {
        vec3 yuv = sourceAt(srcFromOut * p + srcOffset);
        return vec4(clamp(yuvToRgb * yuv + yuvOffset, 0.0, 1.0), 1.0);
    }

    """

    /// The passes a video renderer on a GPU with `limits` makes of `filters`, one line each, as
    /// `init` decides them (the fused single pass, or the chain's plan). Throws the preset error the
    /// renderer would throw. `gpuencode validate` calls this, so it predicts what runs.
    public static func passPlan(_ filters: [FilterInstance], limits: GPULimits, path: RenderPath = .direct) throws -> [String] {
        if filters.isEmpty { return [] }
        if usesFusedPass(filters, path: path, limits: limits) { return [fusedPassLine(filters)] }
        return try ChainPlan(filters: filters, sourceGLSL: chainSourceGLSL, fuse: path != .unfused, limits: limits).description
    }

    /// Whether `init` renders `filters` in the single fused pass (else through the chain's passes):
    /// one decision for the run and for `passPlan`, so validate predicts the run.
    static func usesFusedPass(_ filters: [FilterInstance], path: RenderPath, limits: GPULimits) -> Bool {
        path == .direct && !ChainRenderer.needsSampling(filters) && fusesInOnePass(filters, limits: limits)
    }

    private static func fusedPassLine(_ filters: [FilterInstance]) -> String {
        "pass 1: source, \(filters.map(\.declaration.name).joined(separator: ", ")), to Y'CbCr (filters: \(fusedNeeds(filters)))"
    }

    /// Whether the whole point chain fits the single fused program of the direct path (the
    /// largest of its luma, chroma and packed shaders) on a GPU with `limits`.
    static func fusesInOnePass(_ filters: [FilterInstance], limits: GPULimits) -> Bool {
        let own = [packedBlockMain, directLumaMain, directChromaMain].map { ShaderNeeds(glsl: ChainPlan.header + sourceUniforms + $0) }
        let base = own.max { $0.uniformVectors + $0.samplers < $1.uniformVectors + $1.samplers }!
        let needs = fusedNeeds(filters)
        // One custom filter of uncounted size runs there as before: the linker has the last word.
        return base.fits(with: needs, in: limits) || (filters.count == 1 && needs.unknown)
    }

    /// What the point filters of the direct path's `filtered()` need, with the prefixes it gives them.
    private static func fusedNeeds(_ filters: [FilterInstance]) -> ShaderNeeds {
        filters.enumerated().reduce(ShaderNeeds()) { $0 + ShaderNeeds(glsl: FilterCodegen.function($1.1, prefix: "f\($1.0)_")) }
    }

    static func isUpright420(_ g: RenderGeometry) -> Bool {
        g.rotation == .none && g.chromaShiftX == 1 && g.chromaShiftY == 1
    }

    /// Whether a renderer for this chain writes NV12 (Y + interleaved CbCr) rather than three
    /// planes: the single-pass path for upright 4:2:0 point-filter chains, where a 4x2 block's
    /// chroma is one RGBA8 texel.
    public static func writesNV12(_ g: RenderGeometry, path: RenderPath, filters: [FilterInstance]) -> Bool {
        // A chain ends upright in an RGBA texture whatever the source, so it converts to NV12 too.
        path == .direct && (isUpright420(g) || ChainRenderer.needsSampling(filters))
    }

    /// The filtered picture as RGBA instead of Y'CbCr (previews), on a renderer made with a path
    /// other than `.direct` (so the chain ends in an RGBA texture).
    public func renderRGBA(source: [Plane], time: Double = 0) throws -> RGBAImage {
        guard let chain else { preconditionFailure("renderRGBA needs the viaRGBA or unfused path") }
        upload(source)
        defer { frameIndex += 1 }
        let result = chain.render(time: time, frameIndex: frameIndex)
        var pixels = [UInt8](repeating: 0, count: result.width * result.height * 4)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), result.fbo)
        glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        glReadPixels(0, 0, GLsizei(result.width), GLsizei(result.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixels)
        try FrameRenderer.checkError("rendering a preview")
        return RGBAImage(width: result.width, height: result.height, pixels: pixels)
    }

    /// Starts a frame on the pipelined path: upload, draw and a queued readback, without waiting.
    /// Collect it (in order) with `collect` once the next frame has been submitted.
    public func submit(source: [Plane], time: Double = 0) throws {
        precondition(canPipeline && pendingReads.count < FrameRenderer.readSets)
        upload(source)
        draw(time: time)
        frameIndex += 1
        queueReadback()
        try FrameRenderer.checkError("rendering a frame")
    }

    /// Waits for the oldest submitted frame and copies it into `output` (Y and CbCr).
    public func collect(into output: [Plane]) throws {
        guard let transfers, !pendingReads.isEmpty else { return }
        let base = 3 + 3 * pendingReads.removeFirst()
        let target = nv12!
        let y = output[0]
        transfers.finishReads([(base, y.data, 2 * y.stride), (base + 1, y.data + y.stride, 2 * y.stride),
                               (base + 2, output[1].data, output[1].stride)], target: target, rowBytes: geometry.outputWidth)
        try FrameRenderer.checkError("reading a frame back")
    }

    private func queueReadback() {
        guard let transfers else { return }
        let set = nextReadSet
        nextReadSet = (nextReadSet + 1) % FrameRenderer.readSets
        for a in 0..<3 { transfers.startRead(3 + 3 * set + a, target: nv12!, attachment: a) }
        pendingReads.append(set)
    }

    private func upload(_ source: [Plane]) {
        if let transfers, packed {
            transfers.upload(textures: planes, planes: source.map { (UnsafeRawPointer($0.data), $0.stride) })
            return
        }
        for (i, t) in planes.enumerated() {
            glActiveTexture(GLenum(Int(GL_TEXTURE0) + i))
            // (The buffers upload planes packed four samples per texel; a chain's R8 planes go directly.)
            if packed {
                t.uploadPacked(source[i].data, stride: source[i].stride, scratch: &scratch)
            } else {
                t.upload(source[i].data, stride: source[i].stride)
            }
        }
    }

    private func draw(time: Double) {
        if let chain {
            let result = chain.render(time: time, frameIndex: frameIndex)
            glActiveTexture(GLenum(GL_TEXTURE0))
            glBindTexture(GLenum(GL_TEXTURE_2D), result.textures[0].id)
            for (program, target) in conversion {
                target.bind()
                program.use()
                glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
            }
            return
        }
        for (program, target, bindings) in fast {
            target.bind()
            program.use()
            program.set("time", Float(time))
            program.set("frameIndex", Float(frameIndex))
            if bindings.isDynamic { bindings.refresh(time: time) }
            bindings.bind()
            if bindings.isAnimated { bindings.update(time: time) }
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        }
    }

    /// Renders one frame at `time` seconds: `source` holds the Y, Cb, Cr planes; `output` receives
    /// Y, Cb, Cr, or Y and CbCr when `writesNV12`.
    public func render(source: [Plane], output: [Plane], time: Double = 0) throws {
        precondition(source.count == 3 && output.count == (nv12 != nil ? 2 : 3) && pendingReads.isEmpty)
        upload(source)
        draw(time: time)
        frameIndex += 1
        if let target = nv12 {
            if transfers != nil {
                queueReadback()
                try collect(into: output)
            } else {
                // Even and odd rows come from two targets: each fills every other row of the plane.
                let y = output[0]
                target.readPacked(0, into: y.data, stride: 2 * y.stride, width: geometry.outputWidth, scratch: &scratch)
                target.readPacked(1, into: y.data + y.stride, stride: 2 * y.stride, width: geometry.outputWidth, scratch: &scratch)
                target.readPacked(2, into: output[1].data, stride: output[1].stride, width: geometry.outputWidth, scratch: &scratch)
            }
        } else if chain != nil {
            conversion[0].target.readPlane(0, into: output[0].data, stride: output[0].stride, scratch: &scratch)
            conversion[1].target.readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
            conversion[1].target.readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        } else {
            fast[0].target.readPacked(0, into: output[0].data, stride: output[0].stride, width: geometry.outputWidth, scratch: &scratch)
            fast[1].target.readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
            fast[1].target.readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        }
        try FrameRenderer.checkError("rendering a frame")
    }

    static func checkError(_ what: String) throws {
        let e = glGetError()
        // Sizes and limits are checked before any GL call, so an error here is ours (or the driver's).
        guard e == GL_NO_ERROR else { throw GPUEncodeError(.internal, "OpenGL error 0x\(String(e, radix: 16)) while \(what)") }
    }

    /// The source planes and how to sample them; shared by the fused passes and the chain's first pass.
    static let sourceUniforms = """
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
    uniform ivec2 texelMax;
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

    /// Source sampling, colour conversion and the fused point-filter chain (`filtered`), for the
    /// passes that go straight from source planes to output planes.
    static func prelude(_ filters: [FilterInstance]) -> String {
        let (declarations, calls) = FilterCodegen.pointChain(filters.enumerated().map { ("f\($0)_", $1) })
        return ChainRenderer.header + sourceUniforms + declarations + """
        // uv: where the pixel is in the output, (0, 0) top-left to (1, 1) bottom-right.
        vec4 filtered(vec3 yuv, vec2 uv) {
            vec4 c = vec4(clamp(yuvToRgb * yuv + yuvOffset, 0.0, 1.0), 1.0);
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
    vec4 chromaCols(highp sampler2D tex, int q, int row) {
        int odd = q & 1;
        int first = (q >> 1) - 1 + odd;
        vec4 a = texelFetch(tex, ivec2(max(first, 0), row), 0);
        vec4 b = texelFetch(tex, ivec2(min(first + 1, texelMax.y), row), 0);
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
        vec4 l0 = texelFetch(texY, ivec2(q, 2 * m), 0);
        vec4 l1 = texelFetch(texY, ivec2(q, 2 * m + 1), 0);
        float left0 = q == 0 ? l0.x : texelFetch(texY, ivec2(q - 1, 2 * m), 0).w;
        float left1 = q == 0 ? l1.x : texelFetch(texY, ivec2(q - 1, 2 * m + 1), 0).w;
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
