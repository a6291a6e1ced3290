/// What a piece of GLSL asks of a fragment shader: default-block uniform storage and samplers,
/// read from its `uniform` declarations. Counted before anything is compiled, so a chain can be cut
/// into passes that link (a link that fails tells only that something is too big, not what).
///
/// Uniforms are counted the way the GLSL ES packing rules (GLSL ES 1.00 appendix A.7) bound them
/// from above: every element of a scalar or vector array takes a vec4 slot of its own, a matrix one
/// slot per column. Drivers that pack scalars tighter (Mesa counts components) fit at least as
/// much, so a plan made with these counts links everywhere; it may cut a pass earlier than needed.
struct ShaderNeeds: Equatable, CustomStringConvertible {
    var uniformVectors = 0
    var samplers = 0
    /// A declaration whose size could not be read (a struct, an array sized by an expression):
    /// such a filter gets a pass of its own and the linker has the last word.
    var unknown = false

    init(uniformVectors: Int = 0, samplers: Int = 0, unknown: Bool = false) {
        self.uniformVectors = uniformVectors
        self.samplers = samplers
        self.unknown = unknown
    }

    static func + (a: ShaderNeeds, b: ShaderNeeds) -> ShaderNeeds {
        ShaderNeeds(uniformVectors: a.uniformVectors + b.uniformVectors, samplers: a.samplers + b.samplers,
                    unknown: a.unknown || b.unknown)
    }

    var description: String {
        "\(uniformVectors) uniform vector\(uniformVectors == 1 ? "" : "s"), \(samplers) sampler\(samplers == 1 ? "" : "s")"
    }

    /// Whether a pass that needs `self` fits `limits` once `more` is fused into it. Filters' textures
    /// go on units from `FilterBindings.firstUnit` up, which must stay below the combined limit.
    func fits(with more: ShaderNeeds, in limits: GPULimits) -> Bool {
        let total = self + more
        return !total.unknown && total.uniformVectors <= limits.uniformVectors && total.samplers <= limits.textureUnits
            && Int(FilterBindings.firstUnit) + total.samplers <= limits.combinedTextureUnits
    }

    /// The needs of every `uniform` declaration in `glsl`.
    init(glsl: String) {
        let tokens = ShaderNeeds.tokens(ShaderNeeds.withoutComments(glsl))
        // Integer constants an array size may name: `const int N = 8;` and `#define N 8`.
        var constants: [String: Int] = [:]
        for (i, t) in tokens.enumerated() {
            if t == "#define", i + 2 < tokens.count, let v = Int(tokens[i + 2]) { constants[tokens[i + 1]] = v }
            if t == "const", i + 4 < tokens.count, tokens[i + 1] == "int", tokens[i + 3] == "=", let v = Int(tokens[i + 4]) {
                constants[tokens[i + 2]] = v
            }
        }
        var i = 0
        while i < tokens.count {
            guard tokens[i] == "uniform" else { i += 1; continue }
            i += 1
            while i < tokens.count, ["lowp", "mediump", "highp"].contains(tokens[i]) { i += 1 }
            guard i < tokens.count else { break }
            let type = tokens[i]
            i += 1
            // A named uniform block (`uniform Name { ... }`) is not default-block storage.
            if i < tokens.count, tokens[i] == "{" {
                while i < tokens.count, tokens[i] != "}" { i += 1 }
                continue
            }
            let slots = ShaderNeeds.slots(of: type)
            // One or more declarators: `name`, `name[N]`, separated by commas, up to `;`.
            while i < tokens.count, tokens[i] != ";" {
                var count = 1
                if i + 1 < tokens.count, tokens[i + 1] == "[" {
                    let size = i + 2 < tokens.count ? tokens[i + 2] : ""
                    if let n = Int(size) ?? constants[size], n > 0, i + 3 < tokens.count, tokens[i + 3] == "]" {
                        count = n
                    } else {
                        unknown = true
                    }
                }
                switch slots {
                case .sampler: samplers += count
                case .vectors(let n): uniformVectors += n * count
                case .unknown: unknown = true
                }
                // On to the next declarator or the end of the declaration.
                while i < tokens.count, tokens[i] != ",", tokens[i] != ";" { i += 1 }
                if i < tokens.count, tokens[i] == "," { i += 1 }
            }
        }
    }

    private enum Slots { case vectors(Int), sampler, unknown }

    private static func slots(of type: String) -> Slots {
        if type.contains("sampler") { return .sampler }
        switch type {
        case "float", "int", "uint", "bool": return .vectors(1)
        case "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4", "bvec2", "bvec3", "bvec4":
            return .vectors(1)
        case "mat2", "mat2x2", "mat2x3", "mat2x4": return .vectors(2)
        case "mat3", "mat3x2", "mat3x3", "mat3x4": return .vectors(3)
        case "mat4", "mat4x2", "mat4x3", "mat4x4": return .vectors(4)
        default: return .unknown
        }
    }

    private static func withoutComments(_ text: String) -> [Character] {
        let chars = Array(text)
        var out: [Character] = []
        out.reserveCapacity(chars.count)
        var i = 0
        while i < chars.count {
            if chars[i] == "/", i + 1 < chars.count, chars[i + 1] == "/" {
                while i < chars.count, chars[i] != "\n" { i += 1 }
            } else if chars[i] == "/", i + 1 < chars.count, chars[i + 1] == "*" {
                i += 2
                while i + 1 < chars.count, !(chars[i] == "*" && chars[i + 1] == "/") { i += 1 }
                i += 2
                out.append(" ")
            } else {
                out.append(chars[i])
                i += 1
            }
        }
        return out
    }

    /// Words (identifiers, numbers, `#define`) and single punctuation characters.
    private static func tokens(_ chars: [Character]) -> [String] {
        var tokens: [String] = []
        var word = ""
        for c in chars {
            if c.isLetter || c.isNumber || c == "_" || (c == "#" && word.isEmpty) {
                word.append(c)
            } else {
                if !word.isEmpty { tokens.append(word); word = "" }
                if !c.isWhitespace { tokens.append(String(c)) }
            }
        }
        if !word.isEmpty { tokens.append(word) }
        return tokens
    }
}
