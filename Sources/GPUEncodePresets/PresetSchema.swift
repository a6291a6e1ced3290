import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

/// A JSON Schema (draft 2020-12) of the preset format, made from the same filter declarations the
/// loader checks against, so an editor can complete and check presets. presets/schema.json holds its
/// output (`gpuencode presets schema > presets/schema.json`); a test keeps the two equal.
/// The loader checks more than a schema can say (ids read before they are written, graph cycles,
/// files that exist): `gpuencode validate` is the full check.
public enum PresetSchema {
    public static func text() -> String { JSONWriter.write(schema()) }

    public static func schema() -> JSONValue {
        let filterNames = FilterRegistry.all.map(\.name)
        var defs: [(String, JSONValue)] = [
            ("id", .object([
                ("type", .string("string")), ("pattern", .string("^[A-Za-z][A-Za-z0-9_-]*$")), ("not", .object([("const", .string("source"))])),
                ("description", .string("A name later steps use to read this filter's output (\"source\" is the chain's input).")),
            ])),
            ("color", .object([
                ("description", .string("A colour: \"#rgb\", \"#rrggbb\", \"#rrggbbaa\", \"rgb(r, g, b)\", \"rgba(r, g, b, a)\" (0-255, alpha 0-1), or [r, g, b(, a)] with components 0-1.")),
                // if/then/else on the type, not anyOf: a validator then names the one rule broken.
                ("if", .object([("type", .string("string"))])),
                ("then", .object([("pattern", .string("^" + colorPattern + "$"))])),
                ("else", colorArray),
            ])),
            ("nodeStep", .object([
                ("description", .string("Reads an earlier node's picture: a filter's id, or \"source\" (the input).")),
                ("type", .string("object")), ("required", .strings(["node"])),
                ("properties", .object([("node", .object([("type", .string("string"))]))])),
                ("additionalProperties", .bool(false)),
            ])),
            ("secondInput", .object([
                ("description", .string("A blend's second input: a colour, an image file (.png, .jpg), a movie file (.mp4, .mov, .mkv, .webm, .m4v, .avi), a generator or point filter object, or {\"node\": ID}.")),
                ("if", .object([("type", .string("string"))])),
                ("then", .object([("pattern", .string("^(?:" + colorPattern + #"|.*\.(?:[Pp][Nn][Gg]|[Jj][Pp][Ee]?[Gg]|[Mm][Pp]4|[Mm][Oo][Vv]|[Mm][Kk][Vv]|[Ww][Ee][Bb][Mm]|[Mm]4[Vv]|[Aa][Vv][Ii]))$"#))])),
                ("else", .object([
                    ("if", .object([("type", .string("array"))])),
                    ("then", colorArray),
                    ("else", ref("chainStep")),
                ])),
            ])),
            ("chainStep", .object([
                ("description", .string("A step of a chain: a filter, or {\"node\": ID} to carry on from an earlier node's picture.")),
                // if/then rather than anyOf, so a validator reports the filter's own problem (a misspelt
                // parameter) instead of "'node' is a required property" from the alternative.
                ("if", .object([("type", .string("object")), ("required", .strings(["node"]))])),
                ("then", ref("nodeStep")),
                ("else", ref("filter")),
            ])),
            ("filter", .object([
                ("description", .string("A filter: {\"filter\": NAME, PARAMETER: VALUE, ...}; parameters left out take their defaults.")),
                ("type", .string("object")), ("required", .strings(["filter"])),
                ("properties", .object([("filter", .object([("enum", .strings(filterNames))]))])),
                ("allOf", .array(FilterRegistry.all.map { d in
                    .object([("if", .object([("properties", .object([("filter", .object([("const", .string(d.name))]))]))])),
                             ("then", ref("filters/\(d.name)"))])
                })),
            ])),
            ("graphNode", .object([
                ("description", .string("A graph node: a filter plus its inputs (\"source\" or node names; a blend's second input may also be a colour, image or generator). No \"id\" (the node's name is its id) and no \"with\" (a blend's second input is inputs[1]).")),
                ("type", .string("object")), ("required", .strings(["filter", "inputs"])),
                ("properties", .object([("filter", .object([("enum", .strings(filterNames))]))])),
                ("allOf", .array(FilterRegistry.all.map { d in
                    .object([("if", .object([("properties", .object([("filter", .object([("const", .string(d.name))]))]))])),
                             ("then", ref("nodes/\(d.name)"))])
                })),
            ])),
            ("graph", .object([
                ("type", .string("object")), ("required", .strings(["nodes", "output"])),
                ("properties", .object([
                    ("nodes", .object([("type", .string("object")), ("minProperties", .number(1)), ("maxProperties", .number(PresetReader.maxSteps)),
                                       ("propertyNames", .object([("pattern", .string("^[A-Za-z][A-Za-z0-9_-]*$"))])),
                                       ("additionalProperties", ref("graphNode"))])),
                    ("output", .object([("type", .string("string")), ("description", .string("The node whose picture is the result."))])),
                ])),
                ("additionalProperties", .bool(false)),
            ])),
            ("encode", .object([
                ("description", .string("Default encoder settings (the command line's names); a flag given on the command line wins.")),
                ("type", .string("object")),
                ("properties", .object(EncodeSetting.all.filter { $0.places.contains(.preset) }.map { ($0.key, $0.schema) })),
                ("additionalProperties", .bool(false)),
            ])),
        ]
        defs.append(("filters", .object(FilterRegistry.all.map { ($0.name, filterSchema($0)) })))
        defs.append(("nodes", .object(FilterRegistry.all.map { ($0.name, nodeSchema($0)) })))

        return .object([
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
            ("$id", .string("urn:gpuencode:preset:\(Preset.currentVersion)")),
            ("title", .string("gpuencode preset")),
            ("description", .string("A gpuencode preset, version \(Preset.currentVersion) (docs/presets.md). Generated by `gpuencode presets schema`.")),
            ("type", .string("object")),
            ("required", .strings(["version", "name"])),
            ("anyOf", .array([.object([("required", .strings(["filters"]))]), .object([("required", .strings(["graph"]))]),
                              .object([("required", .strings(["extends"]))])])),
            // What the reader refuses at the top level: "parameters" changes an extended preset's
            // filters, and a preset is a chain or a graph, not both.
            ("dependentRequired", .object([("parameters", .strings(["extends"]))])),
            ("not", .object([("required", .strings(["filters", "graph"]))])),
            ("properties", .object([
                ("$schema", .object([("type", .string("string")), ("description", .string("Where an editor finds this schema; ignored by gpuencode."))])),
                ("version", .object([("const", .number(Preset.currentVersion)),
                                     ("description", .string("Format version. Older files are upgraded on load; `gpuencode presets upgrade` rewrites them."))])),
                ("name", .object([("type", .string("string"))])),
                ("description", .object([("type", .string("string"))])),
                ("author", .object([("type", .string("string"))])),
                ("tags", .object([("type", .string("array")), ("items", .object([("type", .string("string"))]))])),
                ("extends", .object([("type", .string("string")),
                                     ("description", .string("A built-in preset's name, or a path to a preset file relative to this one."))])),
                ("parameters", .object([
                    ("description", .string("With extends: new parameter values for the parent's filters, keyed by id (or graph node name) or by position (\"0\", \"1\", ...).")),
                    ("type", .string("object")), ("additionalProperties", .object([("type", .string("object"))])),
                ])),
                ("filters", .object([("type", .string("array")), ("maxItems", .number(PresetReader.maxSteps)), ("items", ref("chainStep"))])),
                ("graph", ref("graph")),
                ("encode", ref("encode")),
                ("light", .object([("enum", .strings(FilterLight.allCases.map(\.rawValue))), ("default", .string(FilterLight.gamma.rawValue)),
                                   ("description", .string("Where filters compute: gamma (the video's R'G'B', as GPUImage) or linear (linearised at the start, half float, re-encoded at the end, as Movit): blurs and blends then mix light physically."))])),
            ])),
            ("additionalProperties", .bool(false)),
            ("$defs", .object(defs)),
        ])
    }

    static func ref(_ name: String) -> JSONValue { .object([("$ref", .string("#/$defs/\(name)"))]) }

    /// `rgb(r, g, b)` / `rgba(r, g, b, a)` with r, g, b in 0-255 and a in 0-1 (decimals allowed, as
    /// `parseColor` reads them), or `#rgb`, `#rrggbb`, `#rrggbbaa`; any case, spaces around.
    static let colorPattern: String = {
        // Unanchored, so secondInput can join it with file names.
        let byte = #"\s*(?:(?:25[0-4]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(?:\.[0-9]*)?|255(?:\.0*)?|\.[0-9]+)\s*"#
        let unit = #"\s*(?:0?\.[0-9]+|0(?:\.[0-9]*)?|1(?:\.0*)?)\s*"#
        return #"\s*(?:#(?:[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})|[Rr][Gg][Bb]\("# + byte + "," + byte + "," + byte
            + #"\)|[Rr][Gg][Bb][Aa]\("# + byte + "," + byte + "," + byte + "," + unit + #"\))\s*"#
    }()

    static let colorArray = JSONValue.object([
        ("type", .string("array")), ("items", .object([("type", .string("number")), ("minimum", .number(0)), ("maximum", .number(1))])),
        ("minItems", .number(3)), ("maxItems", .number(4)),
    ])

    /// A filter in a chain (or a blend's `with`): its parameters, `id`, and a blend's `with`, which a
    /// chain's blend needs. `inputs` belongs to graph nodes only.
    static func filterSchema(_ d: FilterDeclaration) -> JSONValue {
        var props: [(String, JSONValue)] = [
            ("filter", .object([("const", .string(d.name))])),
            ("id", ref("id")),
        ]
        if case .blend = d.kind { props.append(("with", ref("secondInput"))) }
        let isShader = d.name == ShaderFilter.declaration.name
        if isShader {
            props.append(("parameters", .object([
                ("description", .string("The shader's own uniforms: NAME: {\"type\": float|int|bool|vec2|vec3|vec4|color, \"default\", \"range\": [min, max], \"description\"}.")),
                ("type", .string("object")),
                // GLSL identifiers, not the built-ins the shader already has nor the filter's own members
                // (PresetReader.shader refuses the same).
                ("propertyNames", .object([("pattern", .string("^[A-Za-z][A-Za-z0-9_]*$")),
                                           ("not", .object([("enum", .strings(PresetReader.reservedShaderParameters))]))])),
                ("additionalProperties", .object([
                    ("type", .string("object")),
                    ("properties", .object([
                        ("type", .object([("enum", .strings(ShaderFilter.parameterTypes))])),
                        ("default", .object([])),
                        ("range", .object([("type", .string("array")), ("items", .object([("type", .string("number"))])), ("minItems", .number(2)), ("maxItems", .number(2))])),
                        ("description", .object([("type", .string("string"))])),
                    ])),
                    ("additionalProperties", .bool(false)),
                ])),
            ])))
        }
        for p in d.parameters {
            var s = parameterSchema(p.type)
            s.append(("default", PresetWriter.value(p.defaultValue, p.type)))
            s.append(("description", .string(p.summary)))
            var schema = JSONValue.object(s)
            // An object is keyframes, anything else the value itself: if/then/else, so a validator
            // names the broken rule of the one that applies rather than "not valid under any of".
            if d.isAnimatable(p) { schema = .object([("if", .object([("type", .string("object"))])), ("then", keyframes(p.type)), ("else", schema)]) }
            props.append((p.name, schema))
        }
        var members: [(String, JSONValue)] = [("description", .string(d.summary)), ("type", .string("object")), ("properties", .object(props))]
        if case .blend = d.kind { members.append(("required", .strings(["filter", "with"]))) }
        if isShader {
            members.append(("oneOf", .array([.object([("required", .strings(["source"]))]), .object([("required", .strings(["file"]))])])))
        } else {
            members.append(("additionalProperties", .bool(false)))
        }
        return .object(members)
    }

    /// A graph node of this filter: the chain form's parameters (by reference), `inputs` with the
    /// count the filter takes (PresetGraph.inputCount), no `id` or `with`.
    static func nodeSchema(_ d: FilterDeclaration) -> JSONValue {
        let counts = PresetReader.inputCount(d)
        var props: [(String, JSONValue)] = [
            ("filter", .object([("const", .string(d.name))])),
            ("inputs", .object([
                ("description", .string("\"source\" or node names, the base first; a blend's second input may also be a colour, an image or movie file or a generator.")),
                ("type", .string("array")), ("minItems", .number(counts.lowerBound)), ("maxItems", .number(counts.upperBound)),
                ("prefixItems", .array([.object([("type", .string("string"))])])),
            ])),
        ]
        let isShader = d.name == ShaderFilter.declaration.name
        let shared = (isShader ? ["parameters"] : []) + d.parameters.map(\.name)
        for name in shared { props.append((name, ref("filters/\(d.name)/properties/\(name)"))) }
        var members: [(String, JSONValue)] = [("description", .string(d.summary)), ("type", .string("object")), ("properties", .object(props))]
        if isShader {
            members.append(("oneOf", .array([.object([("required", .strings(["source"]))]), .object([("required", .strings(["file"]))])])))
        } else {
            members.append(("additionalProperties", .bool(false)))
        }
        return .object(members)
    }

    static func number(_ type: String, _ lo: Double, _ hi: Double) -> [(String, JSONValue)] {
        [("type", .string(type)), ("minimum", .number(lo)), ("maximum", .number(hi))]
    }

    static func parameterSchema(_ type: ParameterType) -> [(String, JSONValue)] {
        switch type {
        case .float(let r): return number("number", r.lowerBound, r.upperBound)
        case .int(let r): return number("integer", Double(r.lowerBound), Double(r.upperBound))
        case .bool: return [("type", .string("boolean"))]
        case .vector(let n, let r):
            return [("type", .string("array")), ("items", .object(number("number", r.lowerBound, r.upperBound))),
                    ("minItems", .number(n)), ("maxItems", .number(n))]
        case .color: return [("$ref", .string("#/$defs/color"))]
        case .matrix4:
            let row = JSONValue.object([("type", .string("array")), ("items", .object(number("number", -1000, 1000))),
                                        ("minItems", .number(4)), ("maxItems", .number(4))])
            return [("type", .string("array")), ("items", row), ("minItems", .number(4)), ("maxItems", .number(4))]
        case .choice(let words): return [("enum", .strings(words))]
        case .file(let exts):
            guard !exts.isEmpty else { return [("type", .string("string"))] }
            let alternatives = exts.map { ext in ext.map { c in c.isLetter ? "[\(c.lowercased())\(c.uppercased())]" : String(c) }.joined() }
            return [("type", .string("string")), ("pattern", .string("^$|\\.(\(alternatives.joined(separator: "|")))$"))]
        case .points:
            let point = JSONValue.object([("type", .string("array")), ("items", .object(number("number", 0, 1))),
                                          ("minItems", .number(2)), ("maxItems", .number(2))])
            return [("type", .string("array")), ("items", point), ("minItems", .number(2))]
        case .text: return [("type", .string("string"))]
        }
    }

    static func keyframes(_ type: ParameterType) -> JSONValue {
        let pair = JSONValue.object([
            ("type", .string("array")),
            ("prefixItems", .array([.object([("type", .string("number")), ("minimum", .number(0))]), .object(parameterSchema(type))])),
            ("minItems", .number(2)), ("maxItems", .number(2)),
        ])
        return .object([
            ("description", .string("Keyframes: [[seconds, value], ...] with times increasing; linear or smooth easing between them.")),
            ("type", .string("object")), ("required", .strings(["keyframes"])),
            ("properties", .object([
                ("keyframes", .object([("type", .string("array")), ("minItems", .number(1)), ("items", pair)])),
                ("easing", .object([("enum", .strings(Keyframes.Easing.allCases.map(\.rawValue)))])),
            ])),
            ("additionalProperties", .bool(false)),
        ])
    }
}
