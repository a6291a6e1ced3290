import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

/// A loaded preset written back as JSON (`gpuencode presets show`): the current version, the chain form,
/// with `extends` applied, every parameter that differs from its default (a default written out would
/// be a warning when the output is loaded) and a graph compiled into its chain (nodes keep their names
/// as ids; `{"node": NAME}` steps bring back an earlier node's picture). File names are absolute, so
/// the output loads from any folder (given --allow-path for the files' folders). Loading the result
/// gives the same filters.
public enum PresetWriter {
    public static func json(_ preset: Preset) -> JSONValue {
        var members: [(String, JSONValue)] = [("version", .number(Preset.currentVersion)), ("name", .string(preset.name))]
        if !preset.description.isEmpty { members.append(("description", .string(preset.description))) }
        if let author = preset.author { members.append(("author", .string(author))) }
        if !preset.tags.isEmpty { members.append(("tags", .strings(preset.tags))) }
        let e = preset.encode
        if !e.isEmpty {
            let enc = EncodeSetting.all.filter { $0.places.contains(.preset) }.compactMap { s in s.jsonValue(of: e).map { (s.key, $0) } }
            members.append(("encode", .object(enc)))
        }
        if preset.light != .gamma { members.append(("light", .string(preset.light.rawValue))) }
        let filters = preset.filters.enumerated().map { i, f in filter(f, shader: preset.shaderDefinitions[i]) }
        members.append(("filters", .array(filters)))
        return .object(members)
    }

    public static func text(_ preset: Preset) -> String { JSONWriter.write(json(preset)) }

    static func filter(_ f: FilterInstance, shader: ShaderDefinition?) -> JSONValue {
        if f.declaration.name == NodeInputFilter.name { return .object([("node", .string(f.string("node")))]) }
        var members: [(String, JSONValue)] = [("filter", .string(f.declaration.name))]
        if let id = f.id { members.append(("id", .string(id))) }
        if let shader {
            members += shader.members.map { m in
                if m.key == "file", case .string(let path) = m.value.kind, !f.context.builtin { return (m.key, .string(absolutePath(f.context.resolve(path)))) }
                return (m.key, m.value)
            }
        }
        for p in f.declaration.parameters {
            guard let v = f.values[p.name], v != p.defaultValue else { continue }
            if case .file = p.type, case .string(let path) = v, !path.isEmpty, !path.hasPrefix(ResourceContext.builtinPrefix) {
                // A built-in's own files are embedded: named so that any preset can read them.
                members.append((p.name, .string(f.context.builtin ? ResourceContext.builtinPrefix + path : absolutePath(f.context.resolve(path)))))
                continue
            }
            members.append((p.name, value(v, p.type)))
        }
        if let o = f.overlay.first {
            if f.nodeReference != nil {
                members.append(("with", .object([("node", .string(o.string("node")))])))
            } else {
                members.append(("with", filter(o, shader: nil)))
            }
        }
        return .object(members)
    }

    /// A parameter value as the preset format writes it.
    public static func value(_ v: ParameterValue, _ type: ParameterType) -> JSONValue {
        switch v {
        case .animated(let k):
            let frames = zip(k.times, k.values).map { JSONValue.array([.number($0), value($1, type)]) }
            return .object([("keyframes", .array(frames)), ("easing", .string(k.easing.rawValue))])
        case .float(let x): return .number(x)
        case .int(let x): return .number(x)
        case .bool(let b): return .bool(b)
        case .vector(let list):
            if case .color = type, list.count == 4, list.allSatisfy({ abs($0 * 255 - ($0 * 255).rounded()) < 1e-6 }) {
                let hex = list.map { c -> String in
                    let h = String(Int((c * 255).rounded()), radix: 16)
                    return h.count == 1 ? "0" + h : h
                }
                return .string("#" + (list[3] == 1 ? hex.prefix(3) : hex[...]).joined())
            }
            return .numbers(list)
        case .matrix4(let m): return .array((0..<4).map { r in .numbers(Array(m[(r * 4)..<(r * 4 + 4)])) })
        case .string(let s): return .string(s)
        case .points(let points): return .array(points.map { .numbers($0) })
        }
    }
}

/// Writing preset-related text files for the CLI (`presets upgrade -o`, `presets schema -o`):
/// through a temporary file and a rename; an existing file is replaced only with `overwrite`.
public enum PresetFile {
    public static func write(_ text: String, to path: String, overwrite: Bool) throws {
        try writeFileAtomically(Array(text.utf8), to: path, overwrite: overwrite)
    }

    /// The text of a preset file; a read failure is a preset error naming it (exit 67).
    public static func read(_ path: String) throws -> String {
        do { return try readTextFileSafely(path, kind: .preset) } catch let e as FileReadError {
            throw GPUEncodeError(.preset, path: path, "cannot read preset: \(e.reason)")
        }
    }

    /// `text` (a preset of any supported version) upgraded to the current version, as JSON text.
    /// Checks the preset first: an invalid one is an error (its first problem).
    public static func upgrade(_ text: String, origin: String) throws -> String {
        let root: JSONValue
        do { root = try JSONParser.parse(text) } catch let e as JSONSyntaxError {
            throw GPUEncodeError(.preset, path: origin, "\(e.line):\(e.column): invalid JSON: \(e.message)")
        }
        let check = Preset.check(json: text, origin: origin)
        if let first = check.errors.first { throw first.error }
        let version = PresetMigration.version(of: root) ?? Preset.currentVersion
        return JSONWriter.write(PresetMigration.upgrade(root, from: version))
    }
}
