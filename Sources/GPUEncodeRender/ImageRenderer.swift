import CEGL
import GPUEncodeCore
import GPUEncodeFilters

/// A filter chain over a still RGBA picture: previews, still-image outputs and the filter tests.
/// Needs a current GL context (a `GLContext` made on this thread).
public final class ImageRenderer {
    private let chain: ChainRenderer
    private let source: Texture
    private var vao: GLuint = 0
    public let inputWidth: Int
    public let inputHeight: Int
    public var outputWidth: Int { chain.outputWidth }
    public var outputHeight: Int { chain.outputHeight }
    /// The last render's measurements (`averageColor`: RGBA 0...1), in chain order.
    public var statistics: [(name: String, value: [Double])] { chain.statistics }

    /// `fuse: false` renders each point filter in a pass of its own (the reference for fusion).
    /// `limits`: the current context's, unless a test plans for a smaller GPU.
    public init(width: Int, height: Int, filters: [FilterInstance], fuse: Bool = true, limits: GPULimits? = nil) throws {
        inputWidth = width
        inputHeight = height
        glGenVertexArrays(1, &vao)
        glBindVertexArray(vao)
        source = Texture(width: width, height: height, format: GLenum(GL_RGBA8), filter: GL_NEAREST)
        let glsl = """
        uniform highp sampler2D sourceImage;
        vec4 sourcePixel(vec2 p) { return texelFetch(sourceImage, ivec2(p), 0); }

        """
        // The mean of the four pixels around a corner, each clamped to the picture as the source
        // pass's texture is read (a first filter that reads the source itself uses it).
        let quad = glsl + """
        vec4 sourceQuad(vec2 p) {
            ivec2 mx = textureSize(sourceImage, 0) - 1;
            ivec2 c = ivec2(floor(p + 0.5));
            return (texelFetch(sourceImage, clamp(c - 1, ivec2(0), mx), 0) + texelFetch(sourceImage, clamp(c + ivec2(0, -1), ivec2(0), mx), 0)
                + texelFetch(sourceImage, clamp(c + ivec2(-1, 0), ivec2(0), mx), 0) + texelFetch(sourceImage, clamp(c, ivec2(0), mx), 0)) * 0.25;
        }

        """
        var source = ChainSource(glsl: glsl, width: width, height: height, setUp: { $0.set("sourceImage", int: 0) })
        source.quadGLSL = quad
        chain = try ChainRenderer(source: source, filters: filters, fuse: fuse, limits: limits)
    }

    deinit {
        glDeleteVertexArrays(1, &vao)
    }

    public func render(_ image: RGBAImage, time: Double = 0, frameIndex: Int = 0) throws -> RGBAImage {
        precondition(image.width == inputWidth && image.height == inputHeight)
        glBindVertexArray(vao)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), source.id)
        glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(image.width), GLsizei(image.height),
                        GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), image.pixels)
        let result = chain.render(time: time, frameIndex: frameIndex)
        var pixels = [UInt8](repeating: 0, count: result.width * result.height * 4)
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), result.fbo)
        glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        glReadPixels(0, 0, GLsizei(result.width), GLsizei(result.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixels)
        try FrameRenderer.checkError("rendering an image")
        return RGBAImage(width: result.width, height: result.height, pixels: pixels)
    }
}
