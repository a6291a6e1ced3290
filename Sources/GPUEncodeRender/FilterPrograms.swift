import CEGL
import GPUEncodeCore
import GPUEncodeFilters

/// GLSL generation for filter chains, and the per-program state (uniform values, textures) that
/// goes with it. Shared by the video fast path, the chain renderer and the still-image renderer.
enum FilterCodegen {
    /// Uniforms every filter may read; set per pass and per frame.
    static let builtins = """
    uniform vec2 outSize;
    uniform float time;
    uniform float frameIndex;
    uniform vec4 averageColor;

    """

    /// Declarations and the fused call sequence for consecutive point (and blend) filters, given
    /// with the prefix each one's uniforms carry. Each filter's result is clamped and rounded to 8
    /// bits as if it had been written to an 8-bit texture, so fusing gives the picture of one pass per
    /// filter (GPUImage's look) rather than a more precise but different one. Without `roundTo8Bits`
    /// (sources deeper than 8 bits, whose intermediates are half float) results are only clamped,
    /// so a 10-bit picture keeps its steps between filters.
    static func pointChain(_ filters: [(prefix: String, filter: FilterInstance)], roundTo8Bits: Bool = true) -> (declarations: String, calls: String) {
        var declarations = ""
        var calls = ""
        for (prefix, f) in filters {
            declarations += function(f, prefix: prefix)
            calls += roundTo8Bits ? "    c = floor(clamp(\(prefix)apply(c, uv), 0.0, 1.0) * 255.0 + 0.5) / 255.0;\n"
                                  : "    c = clamp(\(prefix)apply(c, uv), 0.0, 1.0);\n"
        }
        return (declarations, calls)
    }

    /// `vec4 PREFIXapply(vec4 c, vec2 uv)` for a point or blend filter.
    static func function(_ f: FilterInstance, prefix: String) -> String {
        switch f.declaration.kind {
        case .point(let glsl):
            return glsl.replacingAll("{{p}}", with: prefix) + "\n"
        case .blend(let glsl):
            var s = glsl.replacingAll("{{p}}", with: prefix) + "\n"
            if let overlay = f.overlay.first {
                s += function(overlay, prefix: prefix + "o_")
                s += "vec4 \(prefix)apply(vec4 c, vec2 uv) { return \(prefix)blend(c, \(prefix)o_apply(c, uv)); }\n"
            } else {
                // No second input: blending with transparent black leaves the picture as it is.
                s += "vec4 \(prefix)apply(vec4 c, vec2 uv) { return \(prefix)blend(c, vec4(0.0)); }\n"
            }
            return s
        case .sampling, .average:
            preconditionFailure("\(f.declaration.name) samples its input; it cannot be fused")
        }
    }

    /// Every (uniform prefix, filter) pair a filter contributes: itself and its overlay.
    static func uniformOwners(_ f: FilterInstance, prefix: String) -> [(String, FilterInstance)] {
        [(prefix, f)] + f.overlay.flatMap { uniformOwners($0, prefix: prefix + "o_") }
    }
}

/// A filter texture on the GPU.
class ResourceTexture {
    let id: GLuint
    let target: GLenum

    init(id: GLuint, target: GLenum) {
        self.id = id
        self.target = target
    }

    init(_ resource: FilterResource) {
        var t: GLuint = 0
        glGenTextures(1, &t)
        id = t
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        switch resource {
        case .image2D(let w, let h, let data, let linear):
            target = GLenum(GL_TEXTURE_2D)
            glBindTexture(target, id)
            switch data {
            case .bytes(let b):
                glTexStorage2D(target, 1, GLenum(GL_RGBA8), GLsizei(w), GLsizei(h))
                glTexSubImage2D(target, 0, 0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), b)
            case .floats(let f):
                // RGBA16F filters linearly on every ES 3 implementation; 32-bit float may not.
                glTexStorage2D(target, 1, GLenum(GL_RGBA16F), GLsizei(w), GLsizei(h))
                glTexSubImage2D(target, 0, 0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_FLOAT), f)
            case .exactFloats(let f):
                glTexStorage2D(target, 1, GLenum(GL_RGBA32F), GLsizei(w), GLsizei(h))
                glTexSubImage2D(target, 0, 0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_FLOAT), f)
            }
            let filter = linear ? GL_LINEAR : GL_NEAREST
            glTexParameteri(target, GLenum(GL_TEXTURE_MIN_FILTER), filter)
            glTexParameteri(target, GLenum(GL_TEXTURE_MAG_FILTER), filter)
        case .table3D(let n, let data):
            target = GLenum(GL_TEXTURE_3D)
            glBindTexture(target, id)
            glTexStorage3D(target, 1, GLenum(GL_RGBA16F), GLsizei(n), GLsizei(n), GLsizei(n))
            glTexSubImage3D(target, 0, 0, 0, 0, GLsizei(n), GLsizei(n), GLsizei(n), GLenum(GL_RGBA), GLenum(GL_FLOAT), data)
            glTexParameteri(target, GLenum(GL_TEXTURE_MIN_FILTER), GL_LINEAR)
            glTexParameteri(target, GLenum(GL_TEXTURE_MAG_FILTER), GL_LINEAR)
            glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_R), GL_CLAMP_TO_EDGE)
        case .uniforms:
            preconditionFailure("uniform arrays are not textures")
        }
        glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    deinit {
        var t = id
        glDeleteTextures(1, &t)
    }
}

/// A filter's texture that follows the frame's time (`FilterDeclaration.dynamic`): RGBA8, uploaded
/// again only when the source hands over a different picture. Shared by every program of the
/// filter (luma and chroma passes), so a frame's picture is uploaded once.
final class DynamicTexture: ResourceTexture {
    let source: DynamicSource
    private var shown: Int64? = nil

    init(_ source: DynamicSource) {
        self.source = source
        var t: GLuint = 0
        glGenTextures(1, &t)
        super.init(id: t, target: GLenum(GL_TEXTURE_2D))
        glBindTexture(target, id)
        glTexStorage2D(target, 1, GLenum(GL_RGBA8), GLsizei(source.width), GLsizei(source.height))
        glTexParameteri(target, GLenum(GL_TEXTURE_MIN_FILTER), GL_LINEAR)
        glTexParameteri(target, GLenum(GL_TEXTURE_MAG_FILTER), GL_LINEAR)
        glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_S), GL_CLAMP_TO_EDGE)
        glTexParameteri(target, GLenum(GL_TEXTURE_WRAP_T), GL_CLAMP_TO_EDGE)
    }

    /// Makes the texture hold the picture for `time`; binds it on `unit` when it uploads.
    func show(time: Double, unit: Int32) {
        let frame = source.frame(at: time)
        guard frame.serial != shown else { return }
        shown = frame.serial
        glActiveTexture(GLenum(Int32(GL_TEXTURE0) + unit))
        glBindTexture(target, id)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glTexSubImage2D(target, 0, 0, 0, GLsizei(source.width), GLsizei(source.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), frame.pixels)
    }
}

/// The filter-owned state of one program: its parameter uniforms (set once) and the textures it
/// samples (bound before each draw, on units from `firstUnit` up).
final class FilterBindings {
    private var textures: [(unit: Int32, texture: ResourceTexture)] = []
    /// Textures that follow the frame's time; `refresh` brings them up to date before a draw.
    private var dynamic: [(unit: Int32, texture: DynamicTexture)] = []
    var isDynamic: Bool { !dynamic.isEmpty }
    /// Earlier nodes' pictures a blend reads (`nodeInput`), by unit.
    private var nodeTextures: [(unit: Int32, target: RenderTarget)] = []
    /// Keyframed parameters, set again for each frame's time.
    private var animated: [(program: ShaderProgram, name: String, type: ParameterType, keyframes: Keyframes)] = []
    var isAnimated: Bool { !animated.isEmpty }

    /// Units below `firstUnit` belong to the pass itself (source planes, pass inputs).
    static let firstUnit: Int32 = 4

    /// `resources` caches built textures by filter prefix so passes of one filter share them.
    /// `inputSize`: the pixels the filter reads (for computed arrays).
    init(program: ShaderProgram, owners: [(String, FilterInstance)], resources: inout [String: [String: ResourceTexture]],
         inputSize: (Int, Int) = (1, 1), nodes: [String: RenderTarget] = [:]) throws {
        program.use()
        var unit = FilterBindings.firstUnit
        for (prefix, f) in owners {
            if f.declaration.name == NodeInputFilter.name {
                let name = f.string("node")
                guard let target = nodes[name] else { throw GPUEncodeError(.preset, "no node named \"\(name)\" before this blend") }
                program.set(prefix + "picture", int: unit)
                nodeTextures.append((unit, target))
                unit += 1
                continue
            }
            for p in f.declaration.parameters {
                let value = f.values[p.name] ?? p.defaultValue
                if case .animated(let k) = value {
                    animated.append((program, prefix + p.name, p.type, k))
                    FilterBindings.setUniform(program, prefix + p.name, type: p.type, value: k.value(at: 0))
                } else {
                    FilterBindings.setUniform(program, prefix + p.name, type: p.type, value: value)
                }
            }
            for (name, values) in f.declaration.arrays?(f, inputSize.0, inputSize.1) ?? [:] {
                FilterBindings.setArray(program, prefix + name, values)
            }
            if f.declaration.resources != nil {
                let built: [String: FilterResource]
                do { built = try f.prepared().resources ?? [:] } catch {
                    throw GPUEncodeError(.preset, "\(f.declaration.name): \(error)")
                }
                for (name, resource) in built {
                    if case .uniforms(let values) = resource { FilterBindings.setArray(program, prefix + name, values) }
                }
                let made: [String: ResourceTexture]
                if let cached = resources[prefix] { made = cached } else {
                    var textures: [String: ResourceTexture] = [:]
                    for (name, resource) in built {
                        if case .uniforms = resource { continue }
                        textures[name] = ResourceTexture(resource)
                    }
                    made = textures
                    resources[prefix] = made
                }
                for (name, texture) in made.sorted(by: { $0.key < $1.key }) {
                    program.set(prefix + name, int: unit)
                    textures.append((unit, texture))
                    unit += 1
                }
            }
            if let compute = f.declaration.tables {
                // Kept under a name no resource builder uses; one filter's passes share its input size.
                let key = prefix + "#tables"
                let made: [String: ResourceTexture]
                if let cached = resources[key] { made = cached } else {
                    made = compute(f, inputSize.0, inputSize.1).mapValues { ResourceTexture($0) }
                    resources[key] = made
                }
                for (name, texture) in made.sorted(by: { $0.key < $1.key }) {
                    program.set(prefix + name, int: unit)
                    textures.append((unit, texture))
                    unit += 1
                }
            }
            if let open = f.declaration.dynamic {
                // Kept with the filter's still textures under a name no resource builder uses.
                let key = prefix + "#dynamic"
                let texture: DynamicTexture
                if let cached = resources[key]?["frame"] as? DynamicTexture { texture = cached } else {
                    do { texture = DynamicTexture(try open(f, f.context)) } catch let e as GPUEncodeError {
                        throw GPUEncodeError(.preset, path: f.context.origin, "\(f.declaration.name): \(e.message)")
                    } catch {
                        throw GPUEncodeError(.preset, path: f.context.origin, "\(f.declaration.name): \(error)")
                    }
                    resources[key] = ["frame": texture]
                }
                program.set(prefix + "frame", int: unit)
                textures.append((unit, texture))
                dynamic.append((unit, texture))
                unit += 1
            }
        }
    }

    /// Sets keyframed uniforms for `time` (the program must be in use).
    func update(time: Double) {
        for a in animated { FilterBindings.setUniform(a.program, a.name, type: a.type, value: a.keyframes.value(at: time)) }
    }

    /// Brings time-following textures to the picture for `time` (before `bind`).
    func refresh(time: Double) {
        for (unit, texture) in dynamic { texture.show(time: time, unit: unit) }
    }

    func bind() {
        for (unit, texture) in textures {
            glActiveTexture(GLenum(Int32(GL_TEXTURE0) + unit))
            glBindTexture(texture.target, texture.id)
        }
        for (unit, target) in nodeTextures {
            glActiveTexture(GLenum(Int32(GL_TEXTURE0) + unit))
            glBindTexture(GLenum(GL_TEXTURE_2D), target.textures[0].id)
        }
    }

    /// A float array, or a vec4 array when the GLSL declares one (four floats per element).
    static func setArray(_ program: ShaderProgram, _ name: String, _ values: [Float]) {
        let location = program.location(name)
        guard location >= 0 else { return }
        if program.uniformType(name) == GLenum(GL_FLOAT_VEC4) {
            glUniform4fv(location, GLsizei(values.count / 4), values)
        } else {
            glUniform1fv(location, GLsizei(values.count), values)
        }
    }

    static func setUniform(_ program: ShaderProgram, _ name: String, type: ParameterType, value: ParameterValue) {
        let location = program.location(name)
        guard location >= 0 else { return }
        switch (type, value) {
        case (.int, _), (.bool, _):
            glUniform1i(location, GLint(value.double))
        case (.choice(let words), .string(let s)):
            glUniform1i(location, GLint(words.firstIndex(of: s) ?? 0))
        case (.matrix4, .matrix4(let m)):
            program.setMatrix(name, rows: m.map(Float.init))
        case (_, .vector(let v)):
            let f = v.map(Float.init)
            switch f.count {
            case 2: glUniform2f(location, f[0], f[1])
            case 3: glUniform3f(location, f[0], f[1], f[2])
            case 4: glUniform4f(location, f[0], f[1], f[2], f[3])
            default: break
            }
        case (_, .float(let v)):
            glUniform1f(location, Float(v))
        default:
            break
        }
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
