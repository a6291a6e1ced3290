import CEGL
import GPUEncodeCore

/// Source planes from a semi-planar frame already on the GPU: NV12 (8-bit), or P010/P016 (deeper,
/// samples in the high bits of 16), as NVDEC leaves them. Something else (CUDA, `CUDAFrames` in the
/// pipeline) fills two textures, luma and interleaved CbCr; two passes then write the renderer's
/// source planes from them exactly as an upload of the planar frame would leave them (four samples
/// per texel where the renderer packs them, Cb and Cr apart, deep samples shifted down to their
/// code values), so everything after sees an ordinary frame.
public final class SemiPlanarSource {
    /// Luma (GL_R8 or GL_R16UI, the picture's size) and CbCr (GL_RG8 or GL_RG16UI, the chroma
    /// planes' size), for the filler to register.
    public var lumaTexture: UInt32 { luma.id }
    public var chromaTexture: UInt32 { chroma.id }
    /// The bytes of one row and the rows of each texture (a copy's extent).
    public var lumaExtent: (bytes: Int, rows: Int) { (luma.width * luma.bytesPerTexel, luma.height) }
    public var chromaExtent: (bytes: Int, rows: Int) { (chroma.width * chroma.bytesPerTexel, chroma.height) }

    private let renderer: FrameRenderer
    private let luma: Texture
    private let chroma: Texture
    private let lumaProgram: ShaderProgram
    private let chromaProgram: ShaderProgram
    /// Framebuffers per set of source planes (the renderer's, or a deinterlacer's history),
    /// keyed by the luma plane's texture: the luma target, then Cb and Cr as two attachments.
    private var framebuffers: [GLuint: (luma: GLuint, chroma: GLuint)] = [:]

    /// `renderer`'s source must be 4:2:0 (NV12 and P010 are).
    public init(renderer: FrameRenderer) throws {
        let g = renderer.geometry
        precondition(g.chromaShiftX == 1 && g.chromaShiftY == 1, "semi-planar sources are 4:2:0")
        guard !renderer.runsOnCPU else {
            throw GPUEncodeError(.gpu, "the plan runs on the CPU, which reads frames from memory")
        }
        self.renderer = renderer
        let deep = g.bitDepth > 8
        luma = Texture(width: g.sourceWidth, height: g.sourceHeight, format: GLenum(deep ? GL_R16UI : GL_R8), filter: GL_NEAREST)
        chroma = Texture(width: g.chromaWidth, height: g.chromaHeight, format: GLenum(deep ? GL_RG16UI : GL_RG8), filter: GL_NEAREST)
        let planes = renderer.sourcePlanes
        let perTexel = planes[0].width < g.sourceWidth ? 4 : 1
        lumaProgram = try ShaderProgram(fragment: SemiPlanarSource.shader(chroma: false, deep: deep, perTexel: perTexel), label: "semi-planar luma")
        chromaProgram = try ShaderProgram(fragment: SemiPlanarSource.shader(chroma: true, deep: deep, perTexel: perTexel), label: "semi-planar chroma")
        for program in [lumaProgram, chromaProgram] {
            program.use()
            program.set("plane", int: 0)
            // P010 and P016 keep a sample in the high bits; the planar formats the renderer reads, in the low.
            program.set("shift", int: Int32(deep ? 16 - g.bitDepth : 0))
        }
        try FrameRenderer.checkError("setting up the semi-planar source")
    }

    deinit {
        for (l, c) in framebuffers.values { glDeleteFramebuffers(2, [l, c]) }
    }

    /// Fills the two textures from system memory (luma, then interleaved CbCr, rows `stride` bytes
    /// apart), as the CUDA copy fills them on the GPU: for semi-planar frames that are in system
    /// memory, and for testing this pass on GPUs without CUDA.
    public func fill(luma lumaPlane: Plane, chroma chromaPlane: Plane) {
        var scratch: [UInt8] = []
        glActiveTexture(GLenum(GL_TEXTURE0))
        luma.upload(lumaPlane.data, stride: lumaPlane.stride, scratch: &scratch)
        chroma.upload(chromaPlane.data, stride: chromaPlane.stride, scratch: &scratch)
    }

    /// Writes the renderer's source planes from the two textures.
    public func render() throws {
        try render(into: renderer.sourcePlanes)
    }

    /// Writes `planes` (Y, Cb, Cr, laid out like the renderer's source planes) from the two textures.
    func render(into planes: [Texture]) throws {
        let (lumaTarget, chromaTarget) = try framebuffers(for: planes)
        glActiveTexture(GLenum(GL_TEXTURE0))
        for (program, fbo, plane, target) in [(lumaProgram, lumaTarget, luma, planes[0]), (chromaProgram, chromaTarget, chroma, planes[1])] {
            program.use()
            glBindTexture(GLenum(GL_TEXTURE_2D), plane.id)
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fbo)
            glViewport(0, 0, GLsizei(target.width), GLsizei(target.height))
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        }
        try FrameRenderer.checkError("reading a frame from GPU memory")
    }

    private func framebuffers(for planes: [Texture]) throws -> (luma: GLuint, chroma: GLuint) {
        if let made = framebuffers[planes[0].id] { return made }
        var ids: [GLuint] = [0, 0]
        glGenFramebuffers(2, &ids)
        for (fbo, attached) in zip(ids, [[planes[0]], [planes[1], planes[2]]]) {
            let status = RenderTarget.attach(attached, to: fbo)
            guard status == GL_FRAMEBUFFER_COMPLETE else {
                glDeleteFramebuffers(2, ids)
                throw GPUEncodeError(.internal, "semi-planar source framebuffer incomplete (0x\(String(status, radix: 16)))")
            }
        }
        framebuffers[planes[0].id] = (ids[0], ids[1])
        return (ids[0], ids[1])
    }

    /// One pass: luma into the Y plane, or CbCr into the Cb and Cr planes (two outputs). A target
    /// texel holds `perTexel` horizontally adjacent samples (4: the renderer's packed RGBA8 or
    /// RGBA16UI planes; 1: R8 or R16UI). Samples past the picture's right edge repeat the last
    /// (an upload leaves row padding there, which no pass reads).
    static func shader(chroma: Bool, deep: Bool, perTexel: Int) -> String {
        let (sampler, output) = deep ? ("usampler2D", "uvec4") : ("sampler2D", "vec4")
        // Deep: integer code values, shifted down; 8-bit: UNORM8 read and written as the same value.
        let sample = deep ? "(texelFetch(plane, ivec2(min(x, last), y), 0) >> uint(shift))" : "texelFetch(plane, ivec2(min(x, last), y), 0)"
        let zero = deep ? "0u" : "0.0", one = deep ? "1u" : "1.0"
        func gather(_ component: String) -> String {
            perTexel == 4 ? "\(output)(at(x0).\(component), at(x0 + 1).\(component), at(x0 + 2).\(component), at(x0 + 3).\(component))"
                : "\(output)(at(x0).\(component), \(zero), \(zero), \(one))"
        }
        let outputs = chroma ? """
            layout(location = 0) out \(output) cb;
            layout(location = 1) out \(output) cr;
            """ : "out \(output) result;"
        let body = chroma ? "cb = \(gather("r"));\n        cr = \(gather("g"));" : "result = \(gather("r"));"
        return """
        #version 300 es
        precision highp float;
        precision highp int;
        uniform highp \(sampler) plane;
        uniform int shift;
        \(outputs)

        int last;
        int y;
        \(output) at(int x) { return \(sample); }

        void main() {
            last = textureSize(plane, 0).x - 1;
            y = int(gl_FragCoord.y);
            int x0 = int(gl_FragCoord.x) * \(perTexel);
            \(body)
        }
        """
    }
}
