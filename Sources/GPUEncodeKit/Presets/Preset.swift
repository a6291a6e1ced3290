import Glibc

/// A named, versioned filter chain loaded from JSON (a built-in from presets/ or a file).
public struct Preset: Sendable {
    public static let currentVersion = 1

    public let name: String
    public let description: String
    public let version: Int
    public let filters: [FilterInstance]
    /// Where it came from: a file path, or `builtin:NAME`; every error names it.
    public let origin: String

    fileprivate init(name: String, description: String, version: Int, filters: [FilterInstance], origin: String) {
        self.name = name
        self.description = description
        self.version = version
        self.filters = filters
        self.origin = origin
    }

    public static var builtinNames: [String] { BuiltinPresetSources.all.map(\.name) }

    /// A built-in name (`sepia`) or a path (anything with a `/` or ending in `.json`).
    public static func load(_ spec: String) throws -> Preset {
        if spec.contains("/") || spec.hasSuffix(".json") {
            let text: String
            do { text = try readTextFile(spec) } catch let e as FileReadError {
                throw GPUEncodeError(.preset, path: spec, "cannot read preset: \(e.reason)")
            }
            return try parse(json: text, origin: spec)
        }
        guard let source = BuiltinPresetSources.all.first(where: { $0.name == spec }) else {
            let hint = suggestion(for: spec, among: builtinNames).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw GPUEncodeError(.preset, path: spec,
                                 "unknown preset\(hint); built-in presets are \(builtinNames.joined(separator: ", ")), or give a path to a .json file")
        }
        return try parse(json: source.json, origin: "builtin:\(spec)")
    }

    public static func parse(json text: String, origin: String) throws -> Preset {
        let root: JSONValue
        do { root = try JSONParser.parse(text) } catch let e as JSONSyntaxError {
            throw GPUEncodeError(.preset, path: origin, "\(e.line):\(e.column): invalid JSON: \(e.message)")
        }
        var v = Validator(origin: origin)
        return try v.preset(root)
    }
}

/// Walks the JSON tree once, so every error can name the file, line:column and JSON path.
private struct Validator {
    let origin: String

    func fail(_ value: JSONValue, _ path: String, _ message: String) -> GPUEncodeError {
        GPUEncodeError(.preset, path: origin, "\(value.line):\(value.column): \(path.isEmpty ? "" : path + ": ")\(message)")
    }

    func members(_ value: JSONValue, _ path: String) throws -> [(key: String, value: JSONValue)] {
        guard case .object(let m) = value.kind else { throw fail(value, path, "expected an object, found \(value.typeName)") }
        return m
    }

    func string(_ value: JSONValue, _ path: String) throws -> String {
        guard case .string(let s) = value.kind else { throw fail(value, path, "expected a string, found \(value.typeName)") }
        return s
    }

    func number(_ value: JSONValue, _ path: String) throws -> Double {
        guard case .number(let n) = value.kind else { throw fail(value, path, "expected a number, found \(value.typeName)") }
        return n
    }

    mutating func preset(_ root: JSONValue) throws -> Preset {
        let known = ["version", "name", "description", "filters"]
        for (key, value) in try members(root, "") where !known.contains(key) {
            let hint = suggestion(for: key, among: known).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw fail(value, key, "unknown member\(hint); expected one of \(known.joined(separator: ", "))")
        }
        guard let versionValue = root["version"] else { throw fail(root, "", "missing \"version\" (use \(Preset.currentVersion))") }
        let version = try number(versionValue, "version")
        guard version == Double(Preset.currentVersion) else {
            throw fail(versionValue, "version", "unsupported version \(formatNumber(version)); this gpuencode reads version \(Preset.currentVersion)")
        }
        guard let nameValue = root["name"] else { throw fail(root, "", "missing \"name\"") }
        let name = try string(nameValue, "name")
        let description = try root["description"].map { try string($0, "description") } ?? ""
        guard let filtersValue = root["filters"] else { throw fail(root, "", "missing \"filters\" (a list such as [{\"filter\": \"sepia\"}])") }
        guard case .array(let list) = filtersValue.kind else {
            throw fail(filtersValue, "filters", "expected an array of filters, found \(filtersValue.typeName)")
        }
        var filters: [FilterInstance] = []
        for (i, item) in list.enumerated() { filters.append(try filter(item, "filters[\(i)]")) }
        return Preset(name: name, description: description, version: Int(version), filters: filters, origin: origin)
    }

    func filter(_ value: JSONValue, _ path: String) throws -> FilterInstance {
        let m = try members(value, path)
        guard let nameValue = value["filter"] else { throw fail(value, path, "missing \"filter\" (the filter's name)") }
        let name = try string(nameValue, path + ".filter")
        let allNames = FilterRegistry.all.map(\.name)
        guard let declaration = FilterRegistry.named(name) else {
            let hint = suggestion(for: name, among: allNames).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw fail(nameValue, path + ".filter", "unknown filter \"\(name)\"\(hint); filters are \(allNames.joined(separator: ", "))")
        }
        var values: [String: ParameterValue] = [:]
        for (key, v) in m where key != "filter" {
            let paramPath = "\(path).\(key)"
            guard let p = declaration.parameter(named: key) else {
                let names = declaration.parameters.map(\.name)
                let hint = suggestion(for: key, among: names).map { " (did you mean \"\($0)\"?)" } ?? ""
                let list = names.isEmpty ? "it takes no parameters" : "its parameters are \(names.joined(separator: ", "))"
                throw fail(v, paramPath, "unknown parameter for \(name)\(hint); \(list)")
            }
            values[key] = try parameter(v, p, paramPath)
        }
        return FilterInstance(declaration, values: values)
    }

    func parameter(_ value: JSONValue, _ p: ParameterDeclaration, _ path: String) throws -> ParameterValue {
        switch p.type {
        case .float(let range):
            let n = try number(value, path)
            guard range.contains(n) else {
                throw fail(value, path, "\(formatNumber(n)) is out of range \(formatNumber(range.lowerBound))...\(formatNumber(range.upperBound))")
            }
            return .float(n)
        case .matrix4:
            guard case .array(let rows) = value.kind, rows.count == 4 else {
                throw fail(value, path, "expected 4 rows of 4 numbers, found \(value.typeName)")
            }
            var flat: [Double] = []
            for (r, row) in rows.enumerated() {
                guard case .array(let cells) = row.kind, cells.count == 4 else {
                    throw fail(row, "\(path)[\(r)]", "expected a row of 4 numbers")
                }
                for (c, cell) in cells.enumerated() {
                    let n = try number(cell, "\(path)[\(r)][\(c)]")
                    guard n.isFinite, abs(n) <= 1000 else { throw fail(cell, "\(path)[\(r)][\(c)]", "\(n) is out of range -1000...1000") }
                    flat.append(n)
                }
            }
            return .matrix4(flat)
        }
    }
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
    let w = Array(word.lowercased())
    let best = candidates.map { ($0, distance(w, Array($0.lowercased()))) }.min { $0.1 < $1.1 }
    guard let (name, d) = best, d <= max(2, w.count / 3) else { return nil }
    return name
}
