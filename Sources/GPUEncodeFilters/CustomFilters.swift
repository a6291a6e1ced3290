// Custom filters: a fragment shader written by the preset author, GPUImage-style.

public enum CustomFilters {
    public static let all: [FilterDeclaration] = [
        ShaderFilter.declaration,
        AverageColorFilter.declaration,
    ]
}

/// `{"filter": "shader", "source": "..."}` or `"file": "look.frag"` (beside the preset), with
/// `"parameters": {"amount": {"type": "float", "default": 0.5, "range": [0, 1]}}` declaring the
/// shader's own uniforms, whose values are then given like any filter's (`"amount": 0.8`).
///
/// The source is GPUImage's GLSL ES 1.00 style, as its custom filters are written:
///
///     varying highp vec2 textureCoordinate;
///     uniform sampler2D inputImageTexture;
///     uniform lowp float amount;
///     void main() {
///         lowp vec4 c = texture2D(inputImageTexture, textureCoordinate);
///         gl_FragColor = vec4(mix(c.rgb, vec3(1.0) - c.rgb, amount), c.a);
///     }
///
/// It runs as a pass of its own (it may sample anywhere). Built in (`builtins`, docs/presets.md):
/// `time` (seconds), `frameIndex`, `texelWidth`, `texelHeight` (one pixel in texture coordinates, as
/// GPUImage's 3x3 filters have), `inputSize` and `outSize` (pixels), `averageColor`. A shader written
/// for GPUImage declares some of them itself (`uniform float time;`): such a declaration, with the
/// built-in's type, is dropped like the `inputImageTexture` one; with another type it is an error at
/// its line (`builtinProblem`). It is compiled once per run; a compile error names the preset and the
/// line in the shader's own text.
public enum ShaderFilter {
    public static let parameterTypes = ["float", "int", "bool", "vec2", "vec3", "vec4", "color"]

    /// What every custom shader can read without declaring it, with its GLSL type and meaning
    /// (the chain's uniforms, FilterCodegen.builtins, and the GPUImage names defined here).
    public static let builtins: [(name: String, type: String, meaning: String)] = [
        ("textureCoordinate", "vec2", "this pixel's position, (0, 0) at the top-left corner to (1, 1) at the bottom-right"),
        ("inputImageTexture", "sampler2D", "the picture so far (read with texture2D or texture)"),
        ("time", "float", "seconds from the start of the output"),
        ("frameIndex", "float", "the frame's number, from 0"),
        ("inputSize", "vec2", "the input picture in pixels"),
        ("outSize", "vec2", "the output picture in pixels (the same as inputSize)"),
        ("texelWidth", "float", "one pixel's width in texture coordinates (1.0 / inputSize.x)"),
        ("texelHeight", "float", "one pixel's height in texture coordinates (1.0 / inputSize.y)"),
        ("averageColor", "vec4", "the mean RGBA (0-1) measured by an earlier averageColor filter, else 0"),
    ]

    /// The uniform built-ins a shader may redeclare (the others are `varying` or a sampler).
    static let uniformBuiltins = builtins.filter { !["textureCoordinate", "inputImageTexture"].contains($0.name) }

    /// The first line that declares a built-in as a uniform of another type (`uniform int time;`),
    /// with what to write instead; nil when there is none. Declarations of the right type are dropped.
    public static func builtinProblem(in source: String) -> (line: Int, message: String)? {
        for (i, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let t = String(line).trimmingSpaces
            guard t.hasPrefix("uniform") else { continue }
            let words = t.split(whereSeparator: { " \t;[".contains($0) }).map(String.init)
            let type = words.dropFirst().first { !["lowp", "mediump", "highp"].contains($0) }
            for b in uniformBuiltins where words.contains(b.name) && type != b.type {
                return (i + 1, "\(b.name) is a built-in \(b.type) (\(b.meaning)); declare it as `uniform \(b.type) \(b.name);` or leave the declaration out")
            }
        }
        return nil
    }

    /// The generic entry, for listings; a preset's `shader` gets a declaration of its own from `make`.
    public static let declaration = FilterDeclaration(
        name: "shader",
        summary: "A custom GPUImage-style fragment shader (inline \"source\" or a \"file\" beside the preset) with declared \"parameters\".",
        category: .custom,
        parameters: [
            ParameterDeclaration("source", .text, default: .string(""), "the GLSL, GPUImage style (textureCoordinate, inputImageTexture, gl_FragColor)"),
            .file("file", extensions: ["frag", "fsh", "glsl"], "a file holding the GLSL instead of source"),
        ],
        kind: .sampling(glsl: "", passes: ["vec4 {{p}}run(vec2 uv) { return texture({{p}}input, uv); }"])
    )

    /// The declaration for one shader: its own parameters and its source wrapped as a pass.
    public static func make(source: String, sourceName: String, parameters: [ParameterDeclaration]) -> FilterDeclaration {
        var defines = """
        #define texture2D texture
        #define inputImageTexture {{p}}input
        #define gl_FragColor {{p}}fragColor
        #define texelWidth (1.0 / {{p}}inputSize.x)
        #define texelHeight (1.0 / {{p}}inputSize.y)
        #define inputSize {{p}}inputSize

        """
        for p in parameters { defines += "#define \(p.name) {{p}}\(p.name)\n" }
        var uniforms = ""
        for p in parameters { uniforms += "uniform \(glslType(p.type)) {{p}}\(p.name);\n" }
        // The author's declarations of what we provide would clash (or are ES 1.00 only): drop them,
        // keeping the line so that line numbers stay the author's.
        let body = source.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let t = String(line).trimmingSpaces
            let drop = (t.hasPrefix("varying") && t.contains("textureCoordinate"))
                || (t.hasPrefix("uniform") && (t.contains("inputImageTexture") || parameters.contains { p in declares(t, p.name) }
                                                || uniformBuiltins.contains { b in declares(t, b.name) }))
                || t.hasPrefix("#version") || t.hasPrefix("precision")
            return drop ? "" : String(line).replacingAll("void main", with: "void {{p}}userMain")
        }.joined(separator: "\n")
        let glsl = uniforms + "vec2 textureCoordinate;\nvec4 {{p}}fragColor;\n" + defines
            + "#line 1\n" + body + "\n#line 100000\n"
            + "#undef texture2D\n#undef inputImageTexture\n#undef gl_FragColor\n#undef texelWidth\n#undef texelHeight\n#undef inputSize\n"
            + parameters.map { "#undef \($0.name)\n" }.joined()
        return FilterDeclaration(
            name: "shader",
            summary: "custom shader \(sourceName)",
            category: .custom,
            parameters: parameters,
            kind: .sampling(glsl: glsl, passes: ["""
            vec4 {{p}}run(vec2 uv) {
                textureCoordinate = uv;
                {{p}}fragColor = vec4(0.0);
                {{p}}userMain();
                return {{p}}fragColor;
            }
            """])
        )
    }

    static func declares(_ line: String, _ name: String) -> Bool {
        let words = line.split(whereSeparator: { " \t;[".contains($0) })
        return words.contains { $0 == name }
    }

    static func glslType(_ type: ParameterType) -> String {
        switch type {
        case .int, .choice: return "int"
        case .bool: return "bool"
        case .vector(let n, _): return "vec\(n)"
        case .color: return "vec4"
        case .matrix4: return "mat4"
        default: return "float"
        }
    }
}

public enum AverageColorFilter {
    public static let declaration = FilterDeclaration(
        name: "averageColor",
        summary: "Measures the mean colour of the picture on the GPU (repeated 4x4 reductions); the picture passes through. Later filters and shaders read it as `averageColor` (vec4); --stats prints it per frame.",
        category: .analysis,
        kind: .average
    )
}
