import Glibc
import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

/// A named, versioned filter chain loaded from JSON (a built-in from presets/ or a file). A preset
/// may be written as a chain (`filters`) or as a graph (`graph`); a graph is compiled into a chain
/// whose nodes carry ids and whose branches restart from an earlier node (see docs/presets.md).
public struct Preset: Sendable {
    /// The newest format version this build reads and writes; older ones are upgraded on load.
    public static let currentVersion = 2
    public static let oldestVersion = 0

    public let name: String
    public let description: String
    /// The version the file was written in (before any upgrade).
    public let version: Int
    public let author: String?
    public let tags: [String]
    public let filters: [FilterInstance]
    /// Encoder settings the preset asks for; command-line flags override them.
    public let encode: PresetEncodeSettings
    /// `"light"`: where the filters compute. `.gamma` (default): on the video's gamma-encoded R'G'B',
    /// as GPUImage does. `.linear`: the source is linearised once at the chain's start, every filter
    /// runs on linear RGB in half float, and the result is re-encoded at the end (Movit's approach),
    /// so blurs and blends mix light as a lens or a projector would.
    public let light: FilterLight
    /// Where it came from: a file path, or `builtin:NAME`; every error names it.
    public let origin: String
    /// The parent presets' origins, nearest first, when the preset `extends` another.
    public let ancestry: [String]
    /// Things worth a look that do not stop the preset from loading (a value equal to its default,
    /// an unused graph node); `gpuencode validate` prints them.
    public let warnings: [PresetDiagnostic]
    /// For custom shaders, by chain index: the JSON that defines them, so that `presets show` can
    /// write them back and `validate` can point at them.
    public let shaderDefinitions: [Int: ShaderDefinition]

    package init(name: String, description: String, version: Int, author: String?, tags: [String], filters: [FilterInstance],
         encode: PresetEncodeSettings, light: FilterLight = .gamma, origin: String, ancestry: [String], warnings: [PresetDiagnostic],
         shaderDefinitions: [Int: ShaderDefinition]) {
        self.light = light
        self.name = name
        self.description = description
        self.version = version
        self.author = author
        self.tags = tags
        self.filters = filters
        self.encode = encode
        self.origin = origin
        self.ancestry = ancestry
        self.warnings = warnings
        self.shaderDefinitions = shaderDefinitions
    }

    public static var builtinNames: [String] { BuiltinPresetSources.all.map(\.name) }

    /// The JSON text of a built-in preset.
    public static func builtinSource(_ name: String) -> String? {
        BuiltinPresetSources.all.first { $0.name == name }?.json
    }

    /// Whether `spec` names a file rather than a built-in or user preset: anything with a `/` or
    /// ending in `.json`.
    public static func isPath(_ spec: String) -> Bool { spec.contains("/") || spec.hasSuffix(".json") }

    /// A built-in name (`sepia`) or a path (anything with a `/` or ending in `.json`). User presets
    /// are found through `PresetLibrary`.
    /// `allowed`: folders beyond the preset's own that its file references may point into.
    public static func load(_ spec: String, allowed: AllowedPaths = .none) throws -> Preset {
        if isPath(spec) { return try loadFile(spec, allowed: allowed) }
        guard let json = builtinSource(spec) else {
            let hint = suggestion(for: spec, among: builtinNames).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw GPUEncodeError(.preset, path: spec,
                                 "unknown preset\(hint); built-in presets are \(builtinNames.joined(separator: ", ")), or give a path to a .json file")
        }
        return try parse(json: json, origin: "builtin:\(spec)")
    }

    public static func loadFile(_ path: String, allowed: AllowedPaths = .none) throws -> Preset {
        try checkFile(path, allowed: allowed).presetOrFirstError(origin: path)
    }

    /// Parses and validates; throws the first error as a `GPUEncodeError` (exit 67).
    public static func parse(json text: String, origin: String, allowed: AllowedPaths = .none) throws -> Preset {
        try check(json: text, origin: origin, allowed: allowed).presetOrFirstError(origin: origin)
    }

    /// Parses and validates, collecting every error it can find rather than stopping at the first.
    /// `preset` is nil when there are errors.
    public static func check(json text: String, origin: String, allowed: AllowedPaths = .none) -> PresetCheck {
        check(bytes: Array(text.utf8), origin: origin, allowed: allowed)
    }

    /// `check` on a file's bytes as read (a file is not decoded to a String first, so that
    /// invalid UTF-8 is an error at its line:column rather than silently replaced).
    public static func check(bytes: [UInt8], origin: String, allowed: AllowedPaths = .none) -> PresetCheck {
        let reader = PresetReader(origin: origin, extendsChain: [], allowed: allowed)
        let preset = reader.read(bytes: bytes)
        // In file order (a parent's errors, from `extends`, first), whatever order they were found in.
        func ordered(_ list: [PresetDiagnostic]) -> [PresetDiagnostic] {
            list.enumerated().sorted { a, b in
                let x = (a.element.file == origin ? 1 : 0, a.element.line, a.element.column, a.offset)
                let y = (b.element.file == origin ? 1 : 0, b.element.line, b.element.column, b.offset)
                return x < y
            }.map(\.element)
        }
        return PresetCheck(preset: reader.errors.isEmpty ? preset : nil, errors: ordered(reader.errors), warnings: ordered(reader.warnings))
    }

    /// `check` for a file on disk (a read failure is an error of its own).
    public static func checkFile(_ path: String, allowed: AllowedPaths = .none) -> PresetCheck {
        let bytes: [UInt8]
        do { bytes = try readFileSafely(path, kind: .preset) } catch let e as FileReadError {
            return PresetCheck(preset: nil, errors: [PresetDiagnostic(.error, file: path, line: 0, column: 0, path: "", "cannot read preset: \(e.reason)")], warnings: [])
        } catch {
            return PresetCheck(preset: nil, errors: [PresetDiagnostic(.error, file: path, line: 0, column: 0, path: "", "cannot read preset: \(error)")], warnings: [])
        }
        return check(bytes: bytes, origin: path, allowed: allowed)
    }
}

/// Where a custom shader filter was written: its JSON path, the filter object (for its position) and
/// the members that define it (`source` or `file`, `parameters`).
public struct ShaderDefinition: Sendable {
    public let path: String
    public let value: JSONValue
    public var members: [(key: String, value: JSONValue)] {
        value.members.filter { ["source", "file", "parameters"].contains($0.key) }
    }
}

/// The outcome of checking one preset.
public struct PresetCheck: Sendable {
    /// The preset, or its first error thrown as a `GPUEncodeError` (exit 67): what a run needs.
    func presetOrFirstError(origin: String) throws -> Preset {
        if let first = errors.first { throw first.error }
        guard let preset else { throw GPUEncodeError(.preset, path: origin, "invalid preset") }
        return preset
    }

    public let preset: Preset?
    public let errors: [PresetDiagnostic]
    public let warnings: [PresetDiagnostic]
}

/// One problem in a preset, with its file, position and JSON path. `line` is 0 when there is no
/// position (an unreadable file).
public struct PresetDiagnostic: Error, Sendable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }
    public let severity: Severity
    public let file: String
    public let line: Int
    public let column: Int
    public let path: String
    public let message: String

    public init(_ severity: Severity, file: String, line: Int, column: Int, path: String, _ message: String) {
        self.severity = severity
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.message = message
    }

    /// `path: message`, without the position (for callers that show line and column apart).
    public var unlocated: String { (path.isEmpty ? "" : path + ": ") + message }

    /// `L:C: path: message`, the part after the file name.
    public var located: String { (line > 0 ? "\(line):\(column): " : "") + unlocated }

    /// `file: L:C: path: message`.
    public var description: String { "\(file): \(located)" }

    /// As the tool's one-line failure (exit 67).
    public var error: GPUEncodeError { GPUEncodeError(.preset, path: file, located) }
}



/// CSS-style colours: `#rgb`, `#rrggbb`, `#rrggbbaa`, `rgb(r, g, b)`, `rgba(r, g, b, a)` (r, g, b
/// in 0-255, a in 0-1). Returns RGBA in 0...1.
public func parseColor(_ text: String) -> [Double]? {
    let t = text.trimmingSpaces.lowercased()
    if t.hasPrefix("#") {
        let hex = Array(t.dropFirst())
        func byte(_ i: Int, _ n: Int) -> Double? {
            guard let v = Int(String(hex[i..<(i + n)]), radix: 16) else { return nil }
            return n == 1 ? Double(v * 17) / 255 : Double(v) / 255
        }
        switch hex.count {
        case 3: if let r = byte(0, 1), let g = byte(1, 1), let b = byte(2, 1) { return [r, g, b, 1] }
        case 6: if let r = byte(0, 2), let g = byte(2, 2), let b = byte(4, 2) { return [r, g, b, 1] }
        case 8: if let r = byte(0, 2), let g = byte(2, 2), let b = byte(4, 2), let a = byte(6, 2) { return [r, g, b, a] }
        default: break
        }
        return nil
    }
    for prefix in ["rgba(", "rgb("] where t.hasPrefix(prefix) && t.hasSuffix(")") {
        let inner = t.dropFirst(prefix.count).dropLast()
        let parts = inner.split(separator: ",").map { Double(String($0).trimmingSpaces) }
        guard parts.count == (prefix == "rgba(" ? 4 : 3), parts.allSatisfy({ $0 != nil }) else { return nil }
        let v = parts.map { $0! }
        guard v[0...2].allSatisfy({ (0...255).contains($0) }) else { return nil }
        let a = v.count == 4 ? v[3] : 1
        guard (0...1).contains(a) else { return nil }
        return [v[0] / 255, v[1] / 255, v[2] / 255, a]
    }
    return nil
}

/// The closest candidate by edit distance, if it is close enough to be a likely typo.
func suggestion(for word: String, among candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var prev = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var cur = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                cur[j + 1] = min(prev[j + 1] + 1, cur[j] + 1, prev[j] + (ca == cb ? 0 : 1))
            }
            prev = cur
        }
        return prev[b.count]
    }
    // Edit distance is quadratic in the word and linear in the candidates: a hint is a courtesy
    // for a typo, not worth seconds on a hostile file with a megabyte name or 100,000 node names.
    guard word.utf8.count <= 64, candidates.count <= 256 else { return nil }
    let w = Array(word.lowercased())
    let best = candidates.map { ($0, distance(w, Array($0.lowercased()))) }.min { $0.1 < $1.1 }
    guard let (name, d) = best, d <= max(2, w.count / 3) else { return nil }
    return name
}
