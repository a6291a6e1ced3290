import CEGL
import Dispatch
import Glibc
import GPUEncodeCore

/// A shader that did not compile; the log keeps its lines so a custom shader's errors can be mapped
/// back to the author's line numbers.
struct ShaderCompileError: Error, CustomStringConvertible {
    let label: String
    let log: String
    var description: String { "compiling the \(label) shader failed: \(log.split(separator: "\n").joined(separator: " | "))" }
}

/// A linked vertex + fragment program, compiled once per run.
final class ShaderProgram {
    let id: GLuint
    private var locations: [String: GLint] = [:]

    /// Every pass draws one triangle covering the target, positioned from gl_VertexID: no vertex buffers.
    static func fullScreenVertexShader(version: String = "#version 300 es") -> String {
        version + "\n" + """
    void main() {
        vec2 p = vec2(float((gl_VertexID & 1) << 2), float((gl_VertexID & 2) << 1)) - 1.0;
        gl_Position = vec4(p, 0.0, 1.0);
    }
    """
    }

    /// Compile failures are preset errors (exit 67) here: our own shaders compile on every ES 3
    /// GPU, so what fails is the preset's code fused into them. (Exit 69 is kept for "no GPU".)
    convenience init(fragment: String, label: String) throws {
        do { try self.init(checking: fragment, label: label) } catch let e as ShaderCompileError {
            throw GPUEncodeError(.preset, e.description)
        }
    }

    /// Throws `ShaderCompileError` with the log, for shaders that come from a preset.
    init(checking fragment: String, label: String) throws {
        // The vertex shader takes the fragment shader's GLSL version: a program's must agree.
        let version = fragment.hasPrefix("#version 310 es") ? "#version 310 es" : "#version 300 es"
        let vs = try ShaderProgram.compile(GLenum(GL_VERTEX_SHADER), ShaderProgram.fullScreenVertexShader(version: version), label: label)
        defer { glDeleteShader(vs) }
        let fs = try ShaderProgram.compile(GLenum(GL_FRAGMENT_SHADER), fragment, label: label)
        defer { glDeleteShader(fs) }
        id = try ShaderProgram.link([vs, fs], label: label)
    }

    /// A compute program (GLES 3.1). Compile failures are preset errors, as for `init(fragment:)`.
    init(compute: String, label: String) throws {
        let cs: GLuint
        do { cs = try ShaderProgram.compile(GLenum(GL_COMPUTE_SHADER), compute, label: label) } catch let e as ShaderCompileError {
            throw GPUEncodeError(.preset, e.description)
        }
        defer { glDeleteShader(cs) }
        id = try ShaderProgram.link([cs], label: label)
    }

    /// A program of `shaders`, linked. The pass plan keeps within the GPU's counted limits, so a
    /// link failure is a custom shader whose size could not be counted, or a driver counting
    /// differently: the preset does not fit.
    private static func link(_ shaders: [GLuint], label: String) throws -> GLuint {
        let id = glCreateProgram()
        for shader in shaders { glAttachShader(id, shader) }
        glLinkProgram(id)
        var ok: GLint = 0
        glGetProgramiv(id, GLenum(GL_LINK_STATUS), &ok)
        guard ok == GL_TRUE else {
            let log = ShaderProgram.infoLog(id, program: true)
            glDeleteProgram(id)
            throw GPUEncodeError(.preset, "the preset does not fit this GPU: linking the \(label) shader failed: \(log)")
        }
        return id
    }

    deinit { glDeleteProgram(id) }

    func use() { glUseProgram(id) }

    func location(_ name: String) -> GLint {
        if let l = locations[name] { return l }
        let l = glGetUniformLocation(id, name)
        locations[name] = l
        return l
    }

    /// The GLSL type of an active uniform (arrays by their base name), or 0.
    func uniformType(_ name: String) -> GLenum {
        var count: GLint = 0
        glGetProgramiv(id, GLenum(GL_ACTIVE_UNIFORMS), &count)
        var buffer = [GLchar](repeating: 0, count: 256)
        for i in 0..<GLuint(count) {
            var length: GLsizei = 0, size: GLint = 0, type: GLenum = 0
            glGetActiveUniform(id, i, GLsizei(buffer.count), &length, &size, &type, &buffer)
            let uniform = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if uniform == name || uniform == name + "[0]" { return type }
        }
        return 0
    }

    func set(_ name: String, _ v: Float) { glUniform1f(location(name), v) }
    func set(_ name: String, int v: Int32) { glUniform1i(location(name), v) }
    func set(_ name: String, _ x: Float, _ y: Float) { glUniform2f(location(name), x, y) }
    func set(_ name: String, _ x: Float, _ y: Float, _ z: Float) { glUniform3f(location(name), x, y, z) }

    /// `rows` is row-major; GLES 3 transposes on upload so GLSL sees the same rows.
    func setMatrix(_ name: String, rows: [Float]) {
        switch rows.count {
        case 4: glUniformMatrix2fv(location(name), 1, GLboolean(GL_TRUE), rows)
        case 9: glUniformMatrix3fv(location(name), 1, GLboolean(GL_TRUE), rows)
        case 16: glUniformMatrix4fv(location(name), 1, GLboolean(GL_TRUE), rows)
        default: preconditionFailure("unsupported matrix size \(rows.count)")
        }
    }

    private static func compile(_ type: GLenum, _ source: String, label: String) throws -> GLuint {
        let shader = glCreateShader(type)
        source.withCString { ptr in
            var p: UnsafePointer<GLchar>? = ptr
            glShaderSource(shader, 1, &p, nil)
        }
        glCompileShader(shader)
        var ok: GLint = 0
        glGetShaderiv(shader, GLenum(GL_COMPILE_STATUS), &ok)
        guard ok == GL_TRUE else {
            let log = infoLog(shader, program: false, joined: false)
            glDeleteShader(shader)
            throw ShaderCompileError(label: label, log: log)
        }
        return shader
    }

    private static func infoLog(_ object: GLuint, program: Bool, joined: Bool = true) -> String {
        var length: GLint = 0
        if program { glGetProgramiv(object, GLenum(GL_INFO_LOG_LENGTH), &length) } else {
            glGetShaderiv(object, GLenum(GL_INFO_LOG_LENGTH), &length)
        }
        guard length > 1 else { return "(no log)" }
        var buffer = [GLchar](repeating: 0, count: Int(length))
        if program { glGetProgramInfoLog(object, length, nil, &buffer) } else { glGetShaderInfoLog(object, length, nil, &buffer) }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return joined ? text.split(separator: "\n").joined(separator: " | ") : text
    }
}

/// An immutable-storage 2-D texture.
final class Texture {
    let id: GLuint
    let width: Int
    let height: Int
    /// The internal format (GL_R8, GL_RGBA8, ...).
    let format: GLenum
    /// How client data for this texture is laid out (glTexSubImage2D's format and type) and how many
    /// bytes one texel takes: 8-bit planes as R8/RGBA8, deep ones (two bytes a sample, host order
    /// like FFmpeg's `le` formats on little-endian machines) as R16UI/RGBA16UI, read with texelFetch.
    let clientFormat: GLenum
    let clientType: GLenum
    let bytesPerTexel: Int

    init(width: Int, height: Int, format: GLenum, filter: GLint) {
        var t: GLuint = 0
        glGenTextures(1, &t)
        id = t
        self.width = width
        self.height = height
        self.format = format
        switch Int32(format) {
        case GL_R16UI: (clientFormat, clientType, bytesPerTexel) = (GLenum(GL_RED_INTEGER), GLenum(GL_UNSIGNED_SHORT), 2)
        case GL_RGBA16UI: (clientFormat, clientType, bytesPerTexel) = (GLenum(GL_RGBA_INTEGER), GLenum(GL_UNSIGNED_SHORT), 8)
        case GL_R8: (clientFormat, clientType, bytesPerTexel) = (GLenum(GL_RED), GLenum(GL_UNSIGNED_BYTE), 1)
        case GL_RG8: (clientFormat, clientType, bytesPerTexel) = (GLenum(GL_RG), GLenum(GL_UNSIGNED_BYTE), 2)
        case GL_RG16UI: (clientFormat, clientType, bytesPerTexel) = (GLenum(GL_RG_INTEGER), GLenum(GL_UNSIGNED_SHORT), 4)
        default: (clientFormat, clientType, bytesPerTexel) = (GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), 4)
        }
        glBindTexture(GLenum(GL_TEXTURE_2D), t)
        glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, format, GLsizei(width), GLsizei(height))
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), filter)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), filter)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    deinit {
        var t = id
        glDeleteTextures(1, &t)
    }

    /// Uploads one plane (one sample per texel) whose rows are `stride` bytes apart (FFmpeg pads rows).
    func upload(_ data: UnsafeRawPointer, stride: Int, scratch: inout [UInt8]) {
        uploadRows(data, stride: stride, scratch: &scratch)
    }

    /// Uploads a plane into a texture a quarter as wide: four samples per texel (RGBA8 for 8-bit
    /// planes, RGBA16UI for deep ones), so a shader gets four neighbours with one fetch. The bytes
    /// past the picture's width (up to the next multiple of 4 samples) come from the row padding
    /// FFmpeg allocates.
    func uploadPacked(_ data: UnsafeRawPointer, stride: Int, scratch: inout [UInt8]) {
        uploadRows(data, stride: stride, scratch: &scratch)
    }

    /// Rows of `width * bytesPerTexel` bytes, `stride` apart: straight from the plane when GL's row
    /// length (counted in texels) can express the stride, else through `scratch`.
    private func uploadRows(_ data: UnsafeRawPointer, stride: Int, scratch: inout [UInt8]) {
        glBindTexture(GLenum(GL_TEXTURE_2D), id)
        let rowBytes = width * bytesPerTexel
        if stride % bytesPerTexel == 0 && stride >= rowBytes {
            glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), GLint(stride / bytesPerTexel))
            glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height), clientFormat, clientType, data)
            glPixelStorei(GLenum(GL_UNPACK_ROW_LENGTH), 0)
            return
        }
        if scratch.count < rowBytes * height { scratch = [UInt8](repeating: 0, count: rowBytes * height) }
        scratch.withUnsafeMutableBytes { raw in
            for y in 0..<height {
                (raw.baseAddress! + y * rowBytes).copyMemory(from: data + y * stride, byteCount: min(stride, rowBytes))
            }
            glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height), clientFormat, clientType, raw.baseAddress)
        }
    }
}

/// A framebuffer with one or more colour attachments.
final class RenderTarget {
    let fbo: GLuint
    let textures: [Texture]
    let width: Int
    let height: Int
    /// Whether glReadPixels may read GL_RED/UNSIGNED_BYTE straight into a plane (Mesa and NVIDIA say yes).
    private(set) var readsRed = false

    /// The first attachment's internal format.
    var format: GLenum { formats[0] }
    private let formats: [GLenum]

    init(width: Int, height: Int, formats: [GLenum], filter: GLint = GL_NEAREST) throws {
        self.width = width
        self.height = height
        self.formats = formats
        textures = formats.map { Texture(width: width, height: height, format: $0, filter: filter) }
        var f: GLuint = 0
        glGenFramebuffers(1, &f)
        fbo = f
        let status = RenderTarget.attach(textures, to: fbo)
        guard status == GL_FRAMEBUFFER_COMPLETE else {
            throw GPUEncodeError(.internal, "framebuffer \(width)x\(height) incomplete (0x\(String(status, radix: 16)))")
        }
        if formats.allSatisfy({ $0 == GLenum(GL_R8) }) {
            var format: GLint = 0, type: GLint = 0
            glGetIntegerv(GLenum(GL_IMPLEMENTATION_COLOR_READ_FORMAT), &format)
            glGetIntegerv(GLenum(GL_IMPLEMENTATION_COLOR_READ_TYPE), &type)
            readsRed = format == GL_RED && type == GL_UNSIGNED_BYTE
        }
    }

    /// Binds framebuffer `fbo` with `textures` as its colour attachments 0, 1, ... (all drawn to);
    /// returns its status.
    static func attach(_ textures: [Texture], to fbo: GLuint) -> GLenum {
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fbo)
        var buffers: [GLenum] = []
        for (i, t) in textures.enumerated() {
            let attachment = GLenum(Int(GL_COLOR_ATTACHMENT0) + i)
            glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), attachment, GLenum(GL_TEXTURE_2D), t.id, 0)
            buffers.append(attachment)
        }
        glDrawBuffers(GLsizei(buffers.count), buffers)
        return glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER))
    }

    deinit {
        var f = fbo
        glDeleteFramebuffers(1, &f)
    }

    func bind() {
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fbo)
        glViewport(0, 0, GLsizei(width), GLsizei(height))
    }

    /// The first attachment's pixels as RGBA in 0...1, rows bottom-up as GL stores them. Half-float
    /// targets (deep sources) are read as floats: GLES reads those only as GL_FLOAT, never as bytes.
    func readRGBA(width w: Int, height h: Int) -> [Double] {
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), fbo)
        glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        if format == GLenum(GL_RGBA16F) {
            var pixels = [Float](repeating: 0, count: w * h * 4)
            glReadPixels(0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_FLOAT), &pixels)
            return pixels.map(Double.init)
        }
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        glReadPixels(0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &pixels)
        return pixels.map { Double($0) / 255 }
    }

    /// Reads an RGBA8 target holding four 8-bit samples per texel into a plane `width` samples wide.
    /// `stride` may be twice the plane's, to fill every other row.
    func readPacked(_ index: Int = 0, into plane: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, scratch: inout [UInt8]) {
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), fbo)
        glReadBuffer(GLenum(Int(GL_COLOR_ATTACHMENT0) + index))
        if stride % 4 == 0 && stride >= self.width * 4 {
            glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), GLint(stride / 4))
            glReadPixels(0, 0, GLsizei(self.width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), plane)
            glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), 0)
            return
        }
        let rowBytes = self.width * 4
        if scratch.count < rowBytes * height { scratch = [UInt8](repeating: 0, count: rowBytes * height) }
        scratch.withUnsafeMutableBytes { raw in
            glReadPixels(0, 0, GLsizei(self.width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), raw.baseAddress)
            for y in 0..<height { (plane + y * stride).update(from: raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * rowBytes, count: width) }
        }
    }

    /// Reads attachment `index` (an R8 texture) into a plane with `stride`-byte rows.
    func readPlane(_ index: Int, into plane: UnsafeMutablePointer<UInt8>, stride: Int, scratch: inout [UInt8]) {
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), fbo)
        glReadBuffer(GLenum(Int(GL_COLOR_ATTACHMENT0) + index))
        if readsRed {
            glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), GLint(stride))
            glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RED), GLenum(GL_UNSIGNED_BYTE), plane)
            glPixelStorei(GLenum(GL_PACK_ROW_LENGTH), 0)
            return
        }
        // ES 3.0 only promises RGBA reads; take the red channel out on the CPU.
        let count = width * height * 4
        if scratch.count < count { scratch = [UInt8](repeating: 0, count: count) }
        scratch.withUnsafeMutableBytes { raw in
            glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), raw.baseAddress)
            let src = raw.bindMemory(to: UInt8.self)
            for y in 0..<height {
                let row = plane + y * stride
                for x in 0..<width { row[x] = src[(y * width + x) * 4] }
            }
        }
    }
}
