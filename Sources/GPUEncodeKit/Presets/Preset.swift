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
        var ids: Set<String> = []
        for (i, item) in list.enumerated() {
            let f = try filter(item, "filters[\(i)]")
            // A blend may read the chain's input or an earlier filter's output, never a later one.
            if let node = f.nodeReference, node != "source", !ids.contains(node) {
                let known = (["source"] + ids.sorted()).joined(separator: ", ")
                throw fail(item["with"] ?? item, "filters[\(i)].with.node", "no earlier filter has id \"\(node)\"; this blend can read \(known)")
            }
            if let id = f.id {
                guard ids.insert(id).inserted else { throw fail(item["id"]!, "filters[\(i)].id", "id \"\(id)\" is used twice") }
            }
            filters.append(f)
        }
        return Preset(name: name, description: description, version: Int(version), filters: filters, origin: origin)
    }

    var context: ResourceContext {
        if origin.hasPrefix("builtin:") { return ResourceContext(baseDirectory: nil, builtin: true, origin: origin) }
        return ResourceContext(baseDirectory: splitPath(origin).dir, origin: origin)
    }

    func filter(_ value: JSONValue, _ path: String) throws -> FilterInstance {
        let m = try members(value, path)
        guard let nameValue = value["filter"] else { throw fail(value, path, "missing \"filter\" (the filter's name)") }
        let name = try string(nameValue, path + ".filter")
        let allNames = FilterRegistry.all.map(\.name)
        guard var declaration = FilterRegistry.named(name) else {
            let hint = suggestion(for: name, among: allNames).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw fail(nameValue, path + ".filter", "unknown filter \"\(name)\"\(hint); `gpuencode filters` lists them")
        }
        var skip: Set<String> = ["filter", "id"]
        if name == "shader" {
            declaration = try shader(value, path)
            skip.formUnion(["source", "file", "parameters"])
        }
        var isBlend = false
        if case .blend = declaration.kind { isBlend = true }
        var values: [String: ParameterValue] = [:]
        var overlay: FilterInstance? = nil
        for (key, v) in m where !skip.contains(key) {
            let paramPath = "\(path).\(key)"
            if key == "with" && isBlend {
                overlay = try secondInput(v, paramPath)
                continue
            }
            guard let p = declaration.parameter(named: key) else {
                let names = declaration.parameters.map(\.name) + (isBlend ? ["with"] : [])
                let hint = suggestion(for: key, among: names).map { " (did you mean \"\($0)\"?)" } ?? ""
                let list = names.isEmpty ? "it takes no parameters" : "its parameters are \(names.joined(separator: ", "))"
                throw fail(v, paramPath, "unknown parameter for \(name)\(hint); \(list)")
            }
            if case .object = v.kind, v["keyframes"] != nil {
                values[key] = try keyframes(v, p, declaration, paramPath)
            } else {
                values[key] = try parameter(v, p, paramPath)
            }
        }
        var instance = FilterInstance(declaration, values: values, overlay: overlay, context: context)
        if let idValue = value["id"] {
            let id = try string(idValue, path + ".id")
            guard id.first.map({ $0.isLetter }) == true, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }), id != "source" else {
                throw fail(idValue, path + ".id", "an id is a name such as \"blurred\" (letters, digits, _ and -; \"source\" is the chain's input)")
            }
            instance.id = id
        }
        if let problem = declaration.check?(instance) { throw fail(value, path, "\(name): \(problem)") }
        do { return try instance.prepared() } catch let e as FilterError {
            throw fail(value, path, "\(name): \(e.message)")
        } catch let e as GPUEncodeError {
            throw fail(value, path, "\(name): \(e.message)")
        }
    }

    /// A custom shader's declaration: its source (inline or a file) and the parameters it declares.
    func shader(_ value: JSONValue, _ path: String) throws -> FilterDeclaration {
        var source: String
        var sourceName: String
        if let s = value["source"] {
            source = try string(s, path + ".source")
            sourceName = "(inline)"
            if value["file"] != nil { throw fail(value, path, "shader: give \"source\" or \"file\", not both") }
        } else if let f = value["file"] {
            let file = try string(f, path + ".file")
            do { source = String(decoding: try context.readFile(file), as: UTF8.self) } catch let e as FilterError {
                throw fail(f, path + ".file", e.message)
            }
            sourceName = file
        } else {
            throw fail(value, path, "shader: missing \"source\" (the GLSL) or \"file\" (a .frag file beside the preset)")
        }
        guard source.contains("main") else { throw fail(value, path, "shader: the source has no main()") }
        var parameters: [ParameterDeclaration] = []
        if let declared = value["parameters"] {
            for (name, spec) in try members(declared, path + ".parameters") {
                let p = "\(path).parameters.\(name)"
                guard name.first.map({ $0.isLetter }) == true, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw fail(spec, p, "a parameter name must be a GLSL identifier")
                }
                guard !["source", "file", "parameters", "filter", "time", "frameIndex"].contains(name) else {
                    throw fail(spec, p, "\"\(name)\" is reserved")
                }
                let typeName = try spec["type"].map { try string($0, p + ".type") } ?? "float"
                guard ShaderFilter.parameterTypes.contains(typeName) else {
                    throw fail(spec, p + ".type", "unknown type \"\(typeName)\"; use one of \(ShaderFilter.parameterTypes.joined(separator: ", "))")
                }
                var lo = -1e6, hi = 1e6
                if let r = spec["range"] {
                    guard case .array(let bounds) = r.kind, bounds.count == 2 else { throw fail(r, p + ".range", "expected [min, max]") }
                    lo = try number(bounds[0], p + ".range[0]")
                    hi = try number(bounds[1], p + ".range[1]")
                    guard lo <= hi else { throw fail(r, p + ".range", "min is above max") }
                }
                let type: ParameterType
                switch typeName {
                case "int": type = .int(range: Int(lo.rounded(.up))...Int(hi.rounded(.down)))
                case "bool": type = .bool
                case "vec2": type = .vector(count: 2, range: lo...hi)
                case "vec3": type = .vector(count: 3, range: lo...hi)
                case "vec4": type = .vector(count: 4, range: lo...hi)
                case "color": type = .color
                default: type = .float(range: lo...hi)
                }
                let summary = try spec["description"].map { try string($0, p + ".description") } ?? ""
                let fallback: ParameterValue
                switch type {
                case .bool: fallback = .bool(false)
                case .int: fallback = .int(0)
                case .vector(let n, _): fallback = .vector([Double](repeating: 0, count: n))
                case .color: fallback = .vector([0, 0, 0, 1])
                default: fallback = .float(0)
                }
                let placeholder = ParameterDeclaration(name, type, default: fallback, summary)
                let defaultValue = try spec["default"].map { try parameter($0, placeholder, p + ".default") } ?? fallback
                if let extra = try members(spec, p).first(where: { !["type", "default", "range", "description"].contains($0.key) }) {
                    throw fail(extra.value, "\(p).\(extra.key)", "unknown member; a shader parameter has type, default, range, description")
                }
                parameters.append(ParameterDeclaration(name, type, default: defaultValue, summary))
            }
        }
        return ShaderFilter.make(source: source, sourceName: sourceName, parameters: parameters)
    }

    /// `{"keyframes": [[t, value], ...], "easing": "linear|smooth"}`: times in seconds of the
    /// output, increasing; each value checked as the parameter's own.
    func keyframes(_ value: JSONValue, _ p: ParameterDeclaration, _ d: FilterDeclaration, _ path: String) throws -> ParameterValue {
        guard d.isAnimatable(p) else {
            throw fail(value, path, "\(d.name).\(p.name) cannot be keyframed (only numbers, vectors and colours that the shader reads directly animate)")
        }
        var easing = Keyframes.Easing.linear
        for (key, v) in try members(value, path) {
            switch key {
            case "keyframes": break
            case "easing":
                let word = try string(v, path + ".easing")
                guard let e = Keyframes.Easing(rawValue: word) else { throw fail(v, path + ".easing", "easing is linear or smooth, not \"\(word)\"") }
                easing = e
            default: throw fail(v, "\(path).\(key)", "unknown member; keyframes take \"keyframes\" and \"easing\"")
            }
        }
        let list = value["keyframes"]!
        guard case .array(let items) = list.kind, !items.isEmpty else {
            throw fail(list, path + ".keyframes", "expected a list of [seconds, value] pairs")
        }
        var times: [Double] = []
        var values: [ParameterValue] = []
        for (i, item) in items.enumerated() {
            let itemPath = "\(path).keyframes[\(i)]"
            guard case .array(let pair) = item.kind, pair.count == 2 else { throw fail(item, itemPath, "expected [seconds, value]") }
            let t = try number(pair[0], itemPath + "[0]")
            guard t >= 0, t.isFinite else { throw fail(pair[0], itemPath + "[0]", "a time is seconds from the start, 0 or more") }
            if let last = times.last, t <= last { throw fail(pair[0], itemPath + "[0]", "times must increase (\(formatNumber(t)) after \(formatNumber(last)))") }
            times.append(t)
            values.append(try parameter(pair[1], p, itemPath + "[1]"))
        }
        return .animated(Keyframes(times: times, values: values, easing: easing))
    }

    /// A blend's `with`: a colour, an image file, or a generator object.
    func secondInput(_ value: JSONValue, _ path: String) throws -> FilterInstance {
        func generator(_ name: String) throws -> FilterDeclaration {
            guard let d = FilterRegistry.named(name) else { throw fail(value, path, "this build has no \(name) filter") }
            return d
        }
        switch value.kind {
        case .object where value["node"] != nil:
            let node = try string(value["node"]!, path + ".node")
            if let extra = try members(value, path).first(where: { $0.key != "node" }) {
                throw fail(extra.value, "\(path).\(extra.key)", "a node input has only \"node\"")
            }
            return NodeInputFilter.instance(node)
        case .object:
            let f = try filter(value, path)
            guard f.declaration.isPoint else {
                throw fail(value, path, "a blend's second input must be a generator or a point filter; \(f.declaration.name) samples its input")
            }
            return f
        case .string(let text) where ["png", "jpg", "jpeg"].contains(pathExtension(text)):
            let d = try generator("image")
            let f = FilterInstance(d, values: ["file": .string(text)], context: context)
            do { return try f.prepared() } catch let e as FilterError { throw fail(value, path, e.message) } catch let e as GPUEncodeError {
                throw fail(value, path, e.message)
            }
        default:
            let color = try parameter(value, .color("color", default: [0, 0, 0, 0], ""), path)
            return FilterInstance(try generator("solidColor"), values: ["color": color], context: context)
        }
    }

    func parameter(_ value: JSONValue, _ p: ParameterDeclaration, _ path: String) throws -> ParameterValue {
        func numbers(_ count: ClosedRange<Int>, _ what: String) throws -> [Double] {
            guard case .array(let items) = value.kind, count.contains(items.count) else {
                throw fail(value, path, "expected \(what), found \(value.typeName)")
            }
            return try items.enumerated().map { try number($1, "\(path)[\($0)]") }
        }
        switch p.type {
        case .float(let range):
            let n = try number(value, path)
            guard range.contains(n) else {
                throw fail(value, path, "\(formatNumber(n)) is out of range \(formatNumber(range.lowerBound))...\(formatNumber(range.upperBound))")
            }
            return .float(n)
        case .int(let range):
            let n = try number(value, path)
            guard n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound) else {
                throw fail(value, path, "expected a whole number in \(range.lowerBound)...\(range.upperBound), found \(formatNumber(n))")
            }
            return .int(Int(n))
        case .bool:
            guard case .bool(let b) = value.kind else { throw fail(value, path, "expected true or false, found \(value.typeName)") }
            return .bool(b)
        case .vector(let count, let range):
            let v = try numbers(count...count, "an array of \(count) numbers")
            for (i, x) in v.enumerated() where !range.contains(x) {
                throw fail(value, "\(path)[\(i)]", "\(formatNumber(x)) is out of range \(formatNumber(range.lowerBound))...\(formatNumber(range.upperBound))")
            }
            return .vector(v)
        case .color:
            if case .string(let text) = value.kind {
                guard let c = parseColor(text) else {
                    throw fail(value, path, "\"\(text)\" is not a colour; use \"#rrggbb\", \"#rrggbbaa\", \"rgb(r, g, b)\", \"rgba(r, g, b, a)\" (0-255, alpha 0-1) or [r, g, b, a] (0-1)")
                }
                return .vector(c)
            }
            var v = try numbers(3...4, "a colour: \"#rrggbb\", \"rgba(r, g, b, a)\" or [r, g, b(, a)] with components 0-1")
            for (i, x) in v.enumerated() where !(0...1).contains(x) {
                throw fail(value, "\(path)[\(i)]", "\(formatNumber(x)) is out of range 0...1 (write 0-255 values as \"rgb(...)\")")
            }
            if v.count == 3 { v.append(1) }
            return .vector(v)
        case .choice(let words):
            let word = try string(value, path)
            guard words.contains(word) else {
                let hint = suggestion(for: word, among: words).map { " (did you mean \"\($0)\"?)" } ?? ""
                throw fail(value, path, "\"\(word)\" is not one of \(words.joined(separator: ", "))\(hint)")
            }
            return .string(word)
        case .file(let extensions):
            let file = try string(value, path)
            guard file.isEmpty || extensions.isEmpty || extensions.contains(pathExtension(file)) else {
                throw fail(value, path, "expected a \(extensions.map { "." + $0 }.joined(separator: " or ")) file, found \"\(file)\"")
            }
            return .string(file)
        case .text:
            return .string(try string(value, path))
        case .points:
            guard case .array(let items) = value.kind, items.count >= 2 else {
                throw fail(value, path, "expected at least two [x, y] points, found \(value.typeName)")
            }
            var points: [[Double]] = []
            for (i, item) in items.enumerated() {
                guard case .array(let xy) = item.kind, xy.count == 2 else { throw fail(item, "\(path)[\(i)]", "expected a point [x, y]") }
                let x = try number(xy[0], "\(path)[\(i)][0]"), y = try number(xy[1], "\(path)[\(i)][1]")
                guard (0...1).contains(x), (0...1).contains(y) else { throw fail(item, "\(path)[\(i)]", "x and y must be in 0...1") }
                if let last = points.last, x <= last[0] { throw fail(item, "\(path)[\(i)]", "x must increase from point to point") }
                points.append([x, y])
            }
            return .points(points)
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

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\n" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s = s.dropLast() }
        return String(s)
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
