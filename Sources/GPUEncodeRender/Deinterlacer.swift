import CEGL
import GPUEncodeCore

/// Deinterlaces on the GPU before anything else sees the picture: frames are uploaded into a
/// history of three (previous, current, next), and each output frame is rendered from it, plane by
/// plane on the Y'CbCr samples (4:2:0 chroma rows belong to alternate fields, so the fields must be
/// separated before chroma is upsampled), straight into the `FrameRenderer`'s source planes; the
/// renderer then runs as if it had uploaded them (`RenderPipeline.process(source: nil, ...)`).
///
/// So a frame is shown one frame late: `push` returns true once the frame before the one pushed
/// can be rendered, and `finish` makes the last frame current with itself as its next (bwdif's
/// end). The first frame has itself as its previous. The method is bwdif's (DeinterlaceShaders).
public final class Deinterlacer {
    /// What one output frame shows of the current frame.
    public enum Output: Sendable, Equatable {
        /// The frame as it is (progressive frames in a stream deinterlaced where flagged).
        case copy
        /// The picture at the time of one field: `second` false is the field shown first (the top
        /// field when `topFieldFirst`), whose rows are kept while the other field's are made.
        case field(second: Bool, topFieldFirst: Bool)
    }

    private let renderer: FrameRenderer
    private let program: ShaderProgram
    /// Three sets of Y, Cb, Cr textures laid out like the renderer's source planes.
    private let history: [[Texture]]
    /// One framebuffer per source plane of the renderer: where the output planes are drawn.
    private var framebuffers: [GLuint] = []
    private var previous: Int?
    private var current: Int?
    private var next: Int?
    /// The current frame is the first (its first field has no field before it) or the last.
    private var currentIsFirst = false
    private var currentIsLast = false
    private var pushed = 0

    public init(renderer: FrameRenderer) throws {
        self.renderer = renderer
        // Deep sources (10 to 16 bits) are kept as unsigned integer code values (R16UI/RGBA16UI).
        let deep = renderer.geometry.bitDepth > 8
        program = try ShaderProgram(fragment: DeinterlaceShaders.fragment(integer: deep), label: "deinterlace")
        program.use()
        program.set("prevTex", int: 0)
        program.set("curTex", int: 1)
        program.set("nextTex", int: 2)
        program.set("sampleMax", int: Int32((1 << renderer.geometry.bitDepth) - 1))
        history = (0..<3).map { _ in renderer.makeSourcePlanes() }
        for plane in renderer.sourcePlanes {
            var f: GLuint = 0
            glGenFramebuffers(1, &f)
            framebuffers.append(f)
            let status = RenderTarget.attach([plane], to: f)
            guard status == GL_FRAMEBUFFER_COMPLETE else {
                throw GPUEncodeError(.internal, "deinterlacing framebuffer incomplete (0x\(String(status, radix: 16)))")
            }
        }
        try FrameRenderer.checkError("setting up the deinterlacer")
    }

    deinit {
        glDeleteFramebuffers(GLsizei(framebuffers.count), framebuffers)
    }

    /// Uploads the next frame. Returns true when the frame before it is now current and can be
    /// rendered (every push after the first).
    public func push(_ planes: [Plane]) -> Bool {
        push { renderer.upload(planes, to: $0) }
    }

    /// `push` for a frame on the GPU already (NVDEC's, through CUDA): `source` holds it.
    public func push(_ source: SemiPlanarSource) throws -> Bool {
        try push { try source.render(into: $0) }
    }

    private func push(filling fill: ([Texture]) throws -> Void) rethrows -> Bool {
        let free = (0..<3).first { $0 != current && $0 != next }!
        try fill(history[free])
        previous = current
        current = next
        next = free
        pushed += 1
        if current == nil {
            // The first frame is its own previous (bwdif clones it): wait for its next.
            current = free
            return false
        }
        if previous == nil || pushed == 2 { previous = current }
        currentIsFirst = pushed == 2
        return true
    }

    /// After the last push: the last frame becomes current, with itself as its next. Returns
    /// false when nothing was pushed.
    public func finish() -> Bool {
        guard pushed > 0 else { return false }
        if pushed == 1 {
            previous = current
            currentIsFirst = true
        } else {
            previous = current
            current = next
            currentIsFirst = false
        }
        currentIsLast = true
        return true
    }

    /// Draws `output` of the current frame into the renderer's source planes.
    public func render(_ output: Output) throws {
        guard let previous, let current, let next else { preconditionFailure("no current frame") }
        program.use()
        var interpolate: Int32 = 0, late: Int32 = 0, method: Int32 = 0
        if case let .field(second, tff) = output {
            // bwdif's filter(parity = tff ^ !second): rows whose parity differs are made.
            interpolate = (tff ? 1 : 0) ^ (second ? 0 : 1)
            late = interpolate ^ (tff ? 1 : 0)
            // bwdif interpolates spatially only where one neighbour in time is missing: the first
            // field of the first frame, the second field of the last.
            let alone = (!second && currentIsFirst && !currentIsLast) || (second && currentIsLast)
            method = alone ? 1 : 2
        }
        glUniform1i(program.location("interpolate"), GLint(interpolate))
        glUniform1i(program.location("late"), GLint(late))
        glUniform1i(program.location("method"), GLint(method))
        for (p, target) in renderer.sourcePlanes.enumerated() {
            for (unit, frame) in [previous, current, next].enumerated() {
                glActiveTexture(GLenum(Int(GL_TEXTURE0) + unit))
                glBindTexture(GLenum(GL_TEXTURE_2D), history[frame][p].id)
            }
            glUniform1i(program.location("height"), GLint(target.height))
            glBindFramebuffer(GLenum(GL_FRAMEBUFFER), framebuffers[p])
            glViewport(0, 0, GLsizei(target.width), GLsizei(target.height))
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        }
        try FrameRenderer.checkError("deinterlacing a frame")
    }
}
