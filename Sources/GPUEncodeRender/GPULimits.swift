import CEGL

/// What one fragment shader and one texture may use on the GPU at hand. Read from the current
/// context at run time: the GLSL ES minimums are far below what real GPUs give, and GPUs differ
/// (llvmpipe and NVIDIA count the same program's uniforms against different limits), so a pass plan
/// made for one GPU is not valid for another. `gpuencode validate` plans against these same numbers.
public struct GPULimits: Sendable, Equatable, CustomStringConvertible {
    /// Default-block uniform storage of a fragment shader, in vec4 slots
    /// (min(GL_MAX_FRAGMENT_UNIFORM_VECTORS, GL_MAX_FRAGMENT_UNIFORM_COMPONENTS / 4)).
    public var uniformVectors: Int
    /// Samplers one fragment shader may use (GL_MAX_TEXTURE_IMAGE_UNITS).
    public var textureUnits: Int
    /// Texture units a program may bind in all (GL_MAX_COMBINED_TEXTURE_IMAGE_UNITS): unit
    /// numbers must stay below it.
    public var combinedTextureUnits: Int
    /// Colour outputs of one pass (GL_MAX_DRAW_BUFFERS); the NV12 passes write three.
    public var drawBuffers: Int
    /// The widest or tallest texture (GL_MAX_TEXTURE_SIZE); every picture the chain holds must fit.
    public var maxTextureSize: Int

    public init(uniformVectors: Int, textureUnits: Int, combinedTextureUnits: Int, drawBuffers: Int, maxTextureSize: Int) {
        self.uniformVectors = uniformVectors
        self.textureUnits = textureUnits
        self.combinedTextureUnits = combinedTextureUnits
        self.drawBuffers = drawBuffers
        self.maxTextureSize = maxTextureSize
    }

    /// The minimums OpenGL ES 3.0 guarantees (for tests and planning without a GPU).
    public static let es30Minimum = GPULimits(uniformVectors: 224, textureUnits: 16, combinedTextureUnits: 32,
                                              drawBuffers: 4, maxTextureSize: 2048)

    /// The limits of the context current on this thread.
    public static func current() -> GPULimits {
        func get(_ name: Int32) -> Int {
            var v: GLint = 0
            glGetIntegerv(GLenum(name), &v)
            return Int(v)
        }
        let vectors = get(GL_MAX_FRAGMENT_UNIFORM_VECTORS)
        let components = get(GL_MAX_FRAGMENT_UNIFORM_COMPONENTS)
        return GPULimits(uniformVectors: min(vectors, components / 4), textureUnits: get(GL_MAX_TEXTURE_IMAGE_UNITS),
                         combinedTextureUnits: get(GL_MAX_COMBINED_TEXTURE_IMAGE_UNITS), drawBuffers: get(GL_MAX_DRAW_BUFFERS),
                         maxTextureSize: get(GL_MAX_TEXTURE_SIZE))
    }

    public var description: String {
        "\(uniformVectors) uniform vectors, \(textureUnits) samplers per shader (\(combinedTextureUnits) combined), \(drawBuffers) draw buffers, textures up to \(maxTextureSize)"
    }
}
