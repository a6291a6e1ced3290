import Glibc
import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

/// Marks an error that has already been recorded, so `attempt` does not record it twice.
struct AlreadyReported: Error {}

/// One step of a chain before it is built: a filter (from `filters` or a graph node), or a restart
/// from an earlier node's picture (`{"node": NAME}` in a chain; inserted by the graph compiler).
enum ChainElement {
    /// `graph`: the graph node's name (its id) and its second input, when it comes from a graph.
    case filter(JSONValue, path: String, graph: GraphNodeContext?)
    case restart(node: String, JSONValue, path: String)
}

struct GraphNodeContext {
    enum Second {
        case node(String)
        case inline(JSONValue, path: String)
    }
    let name: String
    let second: Second?
}

/// Walks a preset's JSON tree, recording every error it can find (with the file, line:column and
/// JSON path) and going on where it can, so `gpuencode validate` reports them all at once.
final class PresetReader {
    let origin: String
    /// The presets that extend this one, outermost first: an `extends` back into them is a cycle.
    let extendsChain: [String]
    var errors: [PresetDiagnostic] = []
    var warnings: [PresetDiagnostic] = []
    /// Folders beyond the preset's own that its file references may point into.
    let allowed: AllowedPaths
    /// How many blends' `with` the reader is inside now: reading one recurses, so a limit keeps a
    /// hostile file (a blend whose `with` is a blend, 1,000 deep) from overflowing the stack.
    var nesting = 0
    static let maxNesting = 32
    /// `extends` reads its parent with a new reader, recursing the same way.
    static let maxExtendsDepth = 16
    /// The largest bound a custom shader's float parameter may declare: well inside a GLSL float.
    static let maxShaderFloat = 1e30

    /// Where relative file names resolve when that is not the preset file's folder: the working
    /// directory for `--filter`, a manifest's folder for its `filter` column.
    let baseDirectory: String?

    init(origin: String, extendsChain: [String], allowed: AllowedPaths = .none, baseDirectory: String? = nil) {
        self.origin = origin
        self.extendsChain = extendsChain
        self.allowed = allowed
        self.baseDirectory = baseDirectory
    }

    func fail(_ value: JSONValue, _ path: String, _ message: String) -> PresetDiagnostic {
        PresetDiagnostic(.error, file: origin, line: value.line, column: value.column, path: path, message)
    }

    func warn(_ value: JSONValue, _ path: String, _ message: String) {
        warnings.append(PresetDiagnostic(.warning, file: origin, line: value.line, column: value.column, path: path, message))
    }

    /// Runs `body`; an error it throws is recorded and nil returned, so reading goes on.
    func attempt<T>(_ body: () throws -> T) -> T? {
        do { return try body() } catch let d as PresetDiagnostic {
            errors.append(d)
        } catch is AlreadyReported {
        } catch let e as GPUEncodeError {
            errors.append(PresetDiagnostic(.error, file: e.path ?? origin, line: 0, column: 0, path: "", e.message))
        } catch {
            errors.append(PresetDiagnostic(.error, file: origin, line: 0, column: 0, path: "", "\(error)"))
        }
        return nil
    }

    /// Names for an error message, the first few only: a message per bad reference that listed
    /// every node of a 100,000-node graph made reading it quadratic.
    func listed(_ names: [String], limit: Int = 12) -> String {
        guard names.count > limit else { return names.joined(separator: ", ") }
        return names.prefix(limit).joined(separator: ", ") + " and \(names.count - limit) more"
    }

    func hint(_ word: String, _ candidates: [String]) -> String {
        // An edit distance per candidate costs far more than the rest of an error: past the first
        // hundred errors (a generated file with 100,000 unknown keys) nobody reads the hints.
        guard errors.count < 100 else { return "" }
        return suggestion(for: word, among: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
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

    var context: ResourceContext {
        let embedded: @Sendable (String) -> [UInt8]? = { BuiltinPresetSources.file($0) }
        if let baseDirectory { return ResourceContext(baseDirectory: baseDirectory, origin: origin, allowed: allowed, embeddedFile: embedded) }
        if origin.hasPrefix("builtin:") { return ResourceContext(baseDirectory: nil, builtin: true, origin: origin, embeddedFile: embedded) }
        return ResourceContext(baseDirectory: splitPath(origin).dir, origin: origin, allowed: allowed, embeddedFile: embedded)
    }

    static func isIdentifier(_ s: String) -> Bool {
        s.first.map { $0.isLetter } == true && s.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
    }

    // MARK: - The preset

    func read(text: String) -> Preset? {
        read(bytes: Array(text.utf8))
    }

    /// A file's bytes as read, so invalid UTF-8 is reported where it is rather than decoded away.
    func read(bytes: [UInt8]) -> Preset? {
        do {
            return read(root: try JSONParser.parse(bytes: bytes))
        } catch let e as JSONSyntaxError {
            errors.append(PresetDiagnostic(.error, file: origin, line: e.line, column: e.column, path: "", "invalid JSON: \(e.message)"))
        } catch {
            errors.append(PresetDiagnostic(.error, file: origin, line: 0, column: 0, path: "", "\(error)"))
        }
        return nil
    }

    /// `$schema` is allowed (and ignored) so editors can find presets/schema.json.
    static let topLevelMembers = ["$schema", "version", "name", "description", "author", "tags", "extends", "parameters", "filters", "graph", "encode", "light"]

    func read(root original: JSONValue) -> Preset? {
        guard case .object = original.kind else {
            errors.append(fail(original, "", "expected an object such as {\"version\": 1, \"name\": ..., \"filters\": [...]}, found \(original.typeName)"))
            return nil
        }
        guard let versionValue = original["version"] else {
            errors.append(fail(original, "", "missing \"version\" (use \(Preset.currentVersion))"))
            return nil
        }
        guard case .number(let v) = versionValue.kind else {
            errors.append(fail(versionValue, "version", "expected a number, found \(versionValue.typeName)"))
            return nil
        }
        guard v == v.rounded(), v >= Double(Preset.oldestVersion), v <= Double(Preset.currentVersion) else {
            let newer = v > Double(Preset.currentVersion) ? " (it was written for a newer gpuencode)" : ""
            errors.append(fail(versionValue, "version", "unsupported version \(formatNumber(v)); this gpuencode reads versions \(Preset.oldestVersion) to \(Preset.currentVersion)\(newer)"))
            return nil
        }
        let version = Int(v)
        let root = PresetMigration.upgrade(original, from: version)

        for (key, value) in (try? members(root, "")) ?? [] where !Self.topLevelMembers.contains(key) {
            errors.append(fail(value, key, "unknown member\(hint(key, Self.topLevelMembers)); expected one of \(Self.topLevelMembers.joined(separator: ", "))"))
        }
        let name: String? = attempt {
            guard let nameValue = root["name"] else { throw fail(root, "", "missing \"name\"") }
            return try string(nameValue, "name")
        }
        var description = root["description"].flatMap { v in attempt { try string(v, "description") } }
        var author = root["author"].flatMap { v in attempt { try string(v, "author") } }
        var tags: [String]? = root["tags"].flatMap { v in
            attempt {
                guard case .array(let items) = v.kind else { throw fail(v, "tags", "expected an array of strings, found \(v.typeName)") }
                return items.enumerated().compactMap { i, item in attempt { try string(item, "tags[\(i)]") } }
            }
        }
        // An older file's x264Preset is read as speed (PresetMigration); errors name it as written.
        let written = version < 2 && original["encode"]?["x264Preset"] != nil && original["encode"]?["speed"] == nil ? ["speed": "x264Preset"] : [:]
        var encode = root["encode"].flatMap { v in attempt { try encodeSettings(v, written: written) } } ?? PresetEncodeSettings()

        var light: FilterLight? = root["light"].flatMap { v in
            attempt {
                let text = try string(v, "light")
                guard let l = FilterLight(rawValue: text) else {
                    throw fail(v, "light", "unknown light \"\(text)\"; expected one of \(FilterLight.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return l
            }
        }
        var parent: (preset: Preset, origin: String)? = nil
        if let ext = root["extends"] {
            parent = loadParent(ext)
            if let p = parent?.preset {
                light = light ?? p.light
                description = description ?? p.description
                author = author ?? p.author
                tags = tags ?? p.tags
                encode = p.encode.overridden(by: encode)
            }
        }

        var chain: (filters: [FilterInstance], shaders: [Int: ShaderDefinition])? = nil
        switch (root["filters"], root["graph"]) {
        case (.some, .some(let g)):
            errors.append(fail(g, "graph", "give \"filters\" (a chain) or \"graph\", not both"))
        case (.some(let list), nil):
            if case .array(let items) = list.kind {
                if !withinChainBound(items) { break }
                let elements = items.enumerated().map { i, item -> ChainElement in
                    if case .object(let m) = item.kind, m.count == 1, m[0].key == "node", case .string(let node) = m[0].value.kind {
                        return .restart(node: node, m[0].value, path: "filters[\(i)].node")
                    }
                    return .filter(item, path: "filters[\(i)]", graph: nil)
                }
                chain = buildChain(elements, userIds: true)
            } else {
                errors.append(fail(list, "filters", "expected an array of filters, found \(list.typeName)"))
            }
        case (nil, .some(let g)):
            if let elements = graphElements(g) { chain = buildChain(elements, userIds: false) }
        case (nil, nil):
            if root["extends"] == nil {
                errors.append(fail(root, "", "missing \"filters\" (a list such as [{\"filter\": \"sepia\"}]) or \"graph\""))
            } else if let p = parent?.preset {
                chain = (p.filters, p.shaderDefinitions)
            }
        }

        if let overrides = root["parameters"] {
            if root["extends"] == nil {
                errors.append(fail(overrides, "parameters", "\"parameters\" changes the filters of the preset this one extends; it needs \"extends\""))
            } else if var c = chain, let parent {
                applyOverrides(overrides, to: &c.filters, parentOrigin: root["filters"] == nil && root["graph"] == nil ? parent.origin : origin)
                chain = c
            }
        }

        guard errors.isEmpty, let name, let chain else { return nil }
        let ancestry = parent.map { [$0.origin] + $0.preset.ancestry } ?? []
        return Preset(name: name, description: description ?? "", version: version, author: author, tags: tags ?? [],
                      filters: chain.filters, encode: encode, light: light ?? .gamma, origin: origin, ancestry: ancestry, warnings: warnings,
                      shaderDefinitions: chain.shaders)
    }

    static var encodeMembers: [String] { EncodeSetting.presetKeys }

    /// `"encode"`: each member by its setting's rule (EncodeSetting.all, the command line's), its
    /// JSON type from the setting's kind. What depends on the codec (crf scale, tune, profile) is
    /// checked against the codec the preset names; without one, against every codec's, and again
    /// when a run knows its codec.
    func encodeSettings(_ value: JSONValue, written: [String: String] = [:]) throws -> PresetEncodeSettings {
        var s = PresetEncodeSettings()
        var located: [String: JSONValue] = [:]
        for (key, v) in try members(value, "encode") {
            let p = "encode.\(written[key] ?? key)"
            _ = attempt { () throws -> Void in
                if let renamed = EncodeSetting.all.first(where: { $0.legacyKeys.contains(key) }) {
                    throw fail(v, p, "\(key) is called \"\(renamed.key)\" since preset version 2 (`gpuencode presets upgrade` rewrites older files)")
                }
                guard let setting = EncodeSetting.named(key), setting.places.contains(.preset) else {
                    throw fail(v, p, "unknown encoder setting\(hint(key, Self.encodeMembers)); \"encode\" takes \(Self.encodeMembers.joined(separator: ", "))")
                }
                let text: String
                switch (setting.kind, v.kind) {
                case (.number, .number(let n)), (.integer, .number(let n)), (.rate, .number(let n)): text = JSONWriter.number(n)
                case (.word, .string(let w)), (.text, .string(let w)), (.rate, .string(let w)): text = w
                case (.flag, .bool(let b)): text = b ? "true" : "false"
                default:
                    let wanted: String
                    switch setting.kind {
                    case .number, .integer: wanted = "a number"
                    case .flag: wanted = "true or false"
                    case .rate: wanted = key == "fps" ? "a frame rate such as 30 or \"30000/1001\"" : "a rate such as \"4M\" or a number of bits per second"
                    default: wanted = "a string"
                    }
                    throw fail(v, p, "expected \(wanted), found \(v.typeName)")
                }
                if let problem = setting.apply(text, at: .preset, to: &s) {
                    var words: [String] = []
                    if case .word(let list) = setting.kind { words = list }
                    throw fail(v, p, problem + (words.isEmpty ? "" : hint(text, words)))
                }
                located[key] = v
            }
        }
        if let codec = s.codec,
           let (key, problem) = EncoderSettings.codecProblem(crf: s.crf, tune: s.tune, profile: s.profile, codec: codec) {
            errors.append(fail(located[key] ?? value, "encode.\(written[key] ?? key)", problem))
        }
        return s
    }

    // MARK: - Chains

    /// Builds the filters of a chain, checking that every node a filter reads comes before it.
    /// `userIds`: the ids were written by the author (chain form), so an unused one is worth a warning.
    func buildChain(_ elements: [ChainElement], userIds: Bool) -> (filters: [FilterInstance], shaders: [Int: ShaderDefinition])? {
        var out: [FilterInstance] = []
        var shaders: [Int: ShaderDefinition] = [:]
        var ids: [String: (JSONValue, String)] = [:]
        var used: Set<String> = []
        var ok = true
        func checkNode(_ node: String, _ at: JSONValue, _ path: String, what: String) -> Bool {
            used.insert(node)
            if node == "source" || ids[node] != nil { return true }
            // Sorted and hinted only while short: this runs once per bad reference.
            let known = ids.count > 12 ? "source, " + listed(Array(ids.keys.prefix(12)), limit: 12) + " and \(ids.count - 12) more"
                                       : (["source"] + ids.keys.sorted()).joined(separator: ", ")
            errors.append(fail(at, path, "no earlier filter has id \"\(node)\"\(ids.count <= 256 ? hint(node, Array(ids.keys)) : ""); \(what) can read \(known)"))
            return false
        }
        for element in elements {
            switch element {
            case .restart(let node, let at, let path):
                if checkNode(node, at, path, what: "this step") { out.append(NodeInputFilter.instance(node)) } else { ok = false }
            case .filter(let value, let path, let graph):
                let rawId: String? = graph?.name ?? {
                    if case .string(let s)? = value["id"]?.kind { return s }
                    return nil
                }()
                defer {
                    if let rawId, ids[rawId] == nil { ids[rawId] = (value["id"] ?? value, path) }
                }
                guard let f = attempt({ try filter(value, path, graph: graph) }) else { ok = false; continue }
                if let node = f.nodeReference {
                    let at = value["with"]?["node"] ?? value["inputs"] ?? value
                    let p = graph == nil ? path + ".with.node" : path + ".inputs[1]"
                    if !checkNode(node, at, p, what: "this blend") { ok = false; continue }
                }
                if let id = f.id, graph == nil, ids[id] != nil {
                    errors.append(fail(value["id"] ?? value, path + ".id", "id \"\(id)\" is used twice"))
                    ok = false
                    continue
                }
                if f.declaration.category == .custom && f.declaration.name == "shader" {
                    shaders[out.count] = ShaderDefinition(path: path, value: value)
                }
                out.append(f)
            }
        }
        if userIds {
            for (id, (at, path)) in ids.sorted(by: { $0.key < $1.key }) where !used.contains(id) {
                warn(at, path + ".id", "id \"\(id)\" is never read (by a blend's {\"node\": \"\(id)\"} or a {\"node\": \"\(id)\"} step)")
            }
        }
        return ok ? (out, shaders) : nil
    }

    func filter(_ value: JSONValue, _ path: String, graph: GraphNodeContext? = nil) throws -> FilterInstance {
        let m = try members(value, path)
        guard let nameValue = value["filter"] else { throw fail(value, path, "missing \"filter\" (the filter's name)") }
        let name = try string(nameValue, path + ".filter")
        let allNames = FilterRegistry.all.map(\.name)
        guard var declaration = FilterRegistry.named(name) else {
            throw fail(nameValue, path + ".filter", "unknown filter \"\(name)\"\(hint(name, allNames)); `gpuencode filters` lists them")
        }
        var skip: Set<String> = graph == nil ? ["filter", "id"] : ["filter", "inputs"]
        if name == "shader" {
            declaration = try shader(value, path)
            skip.formUnion(["source", "file", "parameters"])
        }
        var isBlend = false
        if case .blend = declaration.kind { isBlend = true }
        var values: [String: ParameterValue] = [:]
        var overlay: FilterInstance? = nil
        var failed = false
        for (key, v) in m where !skip.contains(key) {
            let paramPath = "\(path).\(key)"
            if graph != nil && (key == "id" || key == "with") {
                errors.append(fail(v, paramPath, key == "id"
                    ? "a graph node's name is its id; drop \"id\""
                    : "in a graph a blend's second input is inputs[1], not \"with\""))
                failed = true
                continue
            }
            if key == "with" && isBlend {
                if let o = attempt({ try secondInput(v, paramPath) }) { overlay = o } else { failed = true }
                continue
            }
            guard let p = declaration.parameter(named: key) else {
                let names = declaration.parameters.map(\.name) + (isBlend && graph == nil ? ["with"] : [])
                let list = names.isEmpty ? "it takes no parameters" : "its parameters are \(names.joined(separator: ", "))"
                errors.append(fail(v, paramPath, "unknown parameter for \(name)\(hint(key, names)); \(list)"))
                failed = true
                continue
            }
            let parsed = attempt { () throws -> ParameterValue in
                if case .object = v.kind, v["keyframes"] != nil { return try keyframes(v, p, declaration, paramPath) }
                return try parameter(v, p, paramPath)
            }
            guard let parsed else { failed = true; continue }
            if parsed == p.defaultValue && name != "shader" {
                warn(v, paramPath, "\(parsed) is \(name)'s default for \(key); leaving it out does the same")
            }
            values[key] = parsed
        }
        switch graph?.second {
        case .node(let node)?: overlay = NodeInputFilter.instance(node)
        case .inline(let v, let p)?:
            if let o = attempt({ try secondInput(v, p) }) { overlay = o } else { failed = true }
        case nil: break
        }
        if failed { throw AlreadyReported() }
        // A blend with nothing to blend was a silent identity; in a graph the input count is checked
        // (PresetGraph), so this is the chain's (and --filter's) "with".
        if isBlend && graph == nil && overlay == nil {
            throw fail(value, path, "\(name) is a blend and needs \"with\": the picture blended over the chain so far (a colour such as \"#ff8000\", an image file, a generator object or {\"node\": ID})")
        }
        var instance = FilterInstance(declaration, values: values, overlay: overlay, context: context)
        if let graph {
            instance.id = graph.name
        } else if let idValue = value["id"] {
            let id = try string(idValue, path + ".id")
            guard Self.isIdentifier(id), id != "source" else {
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

    /// Names a shader's own parameter cannot have: the filter's members and the built-ins.
    static let reservedShaderParameters = ["source", "file", "parameters", "filter", "id"] + ShaderFilter.builtins.map(\.name)

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
        guard nesting < Self.maxNesting else {
            throw fail(value, path, "blends are nested more than \(Self.maxNesting) deep (a \"with\" inside a \"with\"...); use a graph or {\"node\": ...} steps instead")
        }
        nesting += 1
        defer { nesting -= 1 }
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
        case .string(let text) where VideoInputFilter.movieExtensions.contains(pathExtension(text)):
            let f = FilterInstance(try generator("video"), values: ["file": .string(text)], context: context)
            do { return try f.prepared() } catch let e as FilterError { throw fail(value, path, "video: \(e.message)") }
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
            guard let i = Int(wholeNumber: n), range.contains(i) else {
                throw fail(value, path, "expected a whole number in \(range.lowerBound)...\(range.upperBound), found \(formatNumber(n))")
            }
            return .int(i)
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
