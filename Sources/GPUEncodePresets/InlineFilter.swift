import GPUEncodeCore
import GPUEncodeFilters

/// `--filter 'sepia:intensity=0.5,vignette:end=0.9'` (ffmpeg's `-vf` spelling also works:
/// `sepia=intensity=0.5`, `sepia=0.5`): a chain written on one line, as ffmpeg writes a filtergraph.
///
/// The string is only *spelt* here: each filter becomes the JSON object a preset would hold
/// (`{"filter": "sepia", "intensity": 0.5}`), every value carrying its column in the string, and the
/// preset reader builds and checks the chain exactly as it does a preset's `filters`. So the same
/// filters, the same checks and the same messages, pointing at `1:COLUMN` of the string.
///
/// Syntax:
/// - filters are separated by `,`; a filter is its name, then `:` or `=`, then `:`-separated arguments;
/// - an argument is `key=value`, or a bare value for the filter's parameters in their declared order
///   (`gpuencode filters NAME` lists them), as ffmpeg's `scale=1280:720`; bare values come first;
/// - `'...'` quotes a value (no escapes inside), `\` escapes the next character, and brackets
///   `(...)`, `[...]`, `{...}` keep their commas and colons: `rgb(255,128,0)` and `[0.5,0.5]` need no quotes;
/// - a value starting with `[` or `{` is JSON (a vector, keyframes, a generator for a blend's `with`);
///   otherwise it is read by the parameter's type: numbers, `true`/`false`/`1`/`0`, vectors and colours
///   as numbers separated by `|` or spaces (`center=0.5|0.4`), colours also as `#rrggbb` or `rgb(...)`,
///   curve points as ffmpeg's curves filter writes them (`rgb=0/0 0.5/0.6 1/1`), matrices as 16 numbers.
public enum InlineFilter {
    /// The filters of `text`, checked as a preset's chain; throws the first problem (exit 67), as a
    /// preset does: `ORIGIN: 1:COLUMN: NAME.KEY: message`.
    /// `origin`: the option or column it came from (`--filter`, `jobs.csv:3: filter`);
    /// `baseDirectory`: where relative file names resolve (the working directory for the option, a
    /// manifest's folder for its column); `allowed`: the `--allow-path` folders beyond it.
    /// `folder`: what `baseDirectory` is, in words, for "outside the working directory".
    public static func parse(_ text: String, origin: String, baseDirectory: String, folder: String = "the working directory",
                             allowed: AllowedPaths = .none) throws -> InlineChain {
        let result = check(text, origin: origin, baseDirectory: baseDirectory, folder: folder, allowed: allowed)
        if let first = result.errors.first { throw first.error }
        guard let chain = result.chain else { throw GPUEncodeError(.preset, path: origin, "invalid filter string") }
        return chain
    }

    /// Every problem of `text`, as `gpuencode validate` would list them for a preset.
    public static func check(_ text: String, origin: String, baseDirectory: String, folder: String = "the working directory",
                             allowed: AllowedPaths = .none) -> (chain: InlineChain?, errors: [PresetDiagnostic]) {
        var syntax = Syntax(text: Array(text), origin: origin)
        let objects = syntax.filters()
        if !syntax.errors.isEmpty { return (nil, syntax.errors) }
        if objects.isEmpty {
            return (nil, [PresetDiagnostic(.error, file: origin, line: 1, column: 1, path: "", "no filter given (e.g. 'sepia:intensity=0.5,vignette')")])
        }
        let reader = PresetReader(origin: origin, extendsChain: [], allowed: allowed, baseDirectory: baseDirectory)
        // The preset bound on steps (PresetBounds), told at the first filter past it.
        guard reader.withinChainBound(objects) else { return (nil, reader.errors.map { renamedBound($0) }) }
        let elements = objects.enumerated().map { i, o in ChainElement.filter(o, path: "filters[\(i)]", graph: nil) }
        let built = reader.buildChain(elements, userIds: false)
        let names = objects.map { $0["filter"].flatMap { v -> String? in if case .string(let s) = v.kind { return s }; return nil } ?? "?" }
        let errors = reader.errors.map { d in
            // An unknown parameter is the key's mistake: point at the key, not at its value.
            let column = d.message.hasPrefix("unknown parameter") ? syntax.keyColumns[d.column] ?? d.column : d.column
            return PresetDiagnostic(d.severity, file: d.file, line: d.line, column: column, path: renamed(d.path, names),
                                    d.message.replacingAll("the preset's folder", with: folder))
        }
        guard errors.isEmpty, let built else { return (nil, errors) }
        return (InlineChain(text: text, filters: built.filters, shaders: built.shaders), [])
    }

    static func renamedBound(_ d: PresetDiagnostic) -> PresetDiagnostic {
        PresetDiagnostic(d.severity, file: d.file, line: d.line, column: d.column, path: "", d.message.replacingAll("a chain has", with: "--filter has"))
    }

    /// `filters[1].end` is `vignette.end` in a one-line chain: the user wrote names, not indices.
    static func renamed(_ path: String, _ names: [String]) -> String {
        guard path.hasPrefix("filters["), let close = path.firstIndex(of: "]"),
              let i = Int(path[path.index(path.startIndex, offsetBy: 8)..<close]), names.indices.contains(i) else { return path }
        let rest = path[path.index(after: close)...]
        if rest == ".filter" { return "" }
        let same = names.filter { $0 == names[i] }.count > 1
        return names[i] + (same ? "#\(names[..<i].filter { $0 == names[i] }.count + 1)" : "") + path[path.index(after: close)...]
    }

    /// Splits the string into filter objects. Columns count characters from 1.
    struct Syntax {
        let text: [Character]
        let origin: String
        var errors: [PresetDiagnostic] = []
        /// Each `key=value`'s key column by its value's column.
        var keyColumns: [Int: Int] = [:]
        var i = 0

        init(text: [Character], origin: String) {
            self.text = text
            self.origin = origin
        }

        mutating func error(_ column: Int, _ message: String) {
            errors.append(PresetDiagnostic(.error, file: origin, line: 1, column: column, path: "", message))
        }

        /// One piece of the string: its text with quotes and escapes removed, where it starts, and
        /// whether any of it was quoted (so an empty quoted value is a value).
        struct Piece {
            var text = ""
            var column = 0
            var quoted = false
        }

        /// Reads up to (not past) one of `stops` outside quotes, escapes and brackets.
        mutating func piece(until stops: Set<Character>) -> Piece {
            while i < text.count, text[i] == " " { i += 1 }
            var p = Piece(column: i + 1)
            var depth: [(Character, Int)] = []
            let closing: [Character: Character] = ["(": ")", "[": "]", "{": "}"]
            while i < text.count {
                let c = text[i]
                if depth.isEmpty && stops.contains(c) { break }
                switch c {
                case "\\":
                    guard i + 1 < text.count else { error(i + 1, "a \\ at the end escapes nothing"); i += 1; continue }
                    p.text.append(text[i + 1])
                    i += 2
                    continue
                case "'" where depth.isEmpty:
                    let open = i
                    i += 1
                    while i < text.count, text[i] != "'" { p.text.append(text[i]); i += 1 }
                    if i == text.count { error(open + 1, "unclosed quote ' (a quoted value ends with ')"); return p }
                    p.quoted = true
                    i += 1
                    continue
                case "\"" where !depth.isEmpty:
                    // A JSON string inside brackets: its commas and brackets are its own.
                    p.text.append(c)
                    i += 1
                    while i < text.count, text[i] != "\"" {
                        if text[i] == "\\", i + 1 < text.count { p.text.append(text[i]); i += 1 }
                        p.text.append(text[i])
                        i += 1
                    }
                    if i < text.count { p.text.append(text[i]); i += 1 }
                    continue
                case "(", "[", "{":
                    depth.append((c, i))
                case ")", "]", "}":
                    if let (open, _) = depth.last, closing[open] == c { depth.removeLast() } else {
                        error(i + 1, "\(c) closes nothing (quote the value with '...' or escape it with \\)")
                    }
                default: break
                }
                p.text.append(c)
                i += 1
            }
            if let (open, at) = depth.last {
                error(at + 1, "unclosed \(open) (close it with \(closing[open]!), or quote the value with '...')")
            }
            while p.text.last == " " && !p.quoted { p.text.removeLast() }
            return p
        }

        mutating func filters() -> [JSONValue] {
            var out: [JSONValue] = []
            while i <= text.count {
                let name = piece(until: [",", ":", "="])
                if name.text.isEmpty {
                    error(name.column, i < text.count || !out.isEmpty ? "expected a filter name" : "no filter given")
                    return out
                }
                var members: [(key: String, value: JSONValue)] = [("filter", JSONValue(.string(name.text), line: 1, column: name.column))]
                var positional = 0
                var keyed = false
                if i < text.count, text[i] != "," {
                    i += 1
                    while true {
                        let first = piece(until: [",", ":", "="])
                        var key: String? = nil
                        var value = first
                        if i < text.count, text[i] == "=" {
                            i += 1
                            if first.text.isEmpty { error(first.column, "expected a parameter name before =") }
                            key = first.text
                            value = piece(until: [",", ":"])
                        }
                        let parameters = FilterRegistry.named(name.text)?.parameters ?? []
                        if let key {
                            keyed = true
                            if members.contains(where: { $0.key == key }) {
                                error(first.column, "\(name.text): \(key) is given twice")
                            }
                            keyColumns[value.column] = first.column
                            members.append((key, json(value, parameters.first { $0.name == key }?.type)))
                        } else if !value.text.isEmpty || value.quoted {
                            if keyed {
                                error(value.column, "\(name.text): a value without a name after key=value; write \(parameters.indices.contains(positional) ? parameters[positional].name + "=" : "key=")\(value.text)")
                            } else if !parameters.indices.contains(positional) {
                                let list = parameters.isEmpty ? "it takes none" : "its parameters, in order, are " + parameters.map(\.name).joined(separator: ", ")
                                error(value.column, "\(name.text) has no parameter \(positional + 1) for \"\(value.text)\"; \(list)")
                            } else {
                                let p = parameters[positional]
                                if members.contains(where: { $0.key == p.name }) { error(value.column, "\(name.text): \(p.name) is given twice") }
                                members.append((p.name, json(value, p.type)))
                            }
                            positional += 1
                        } else {
                            error(value.column, "\(name.text): an empty argument (two : in a row, or one at the end)")
                        }
                        guard i < text.count, text[i] == ":" else { break }
                        i += 1
                    }
                }
                out.append(JSONValue(.object(members), line: 1, column: name.column))
                if !errors.isEmpty { return out }
                guard i < text.count else { break }
                i += 1  // the ","
            }
            return out
        }

        /// A value as the JSON a preset would hold, by the parameter's type where it is known; the
        /// reader then checks it (a word where a number belongs is its "expected a number").
        mutating func json(_ p: Piece, _ type: ParameterType?) -> JSONValue {
            func at(_ kind: JSONValue.Kind) -> JSONValue { JSONValue(kind, line: 1, column: p.column) }
            let t = p.text
            switch type {
            case .choice?, .file?, .text?: return at(.string(t))
            default: break
            }
            if t.hasPrefix("[") || t.hasPrefix("{") {
                do { return Self.rebased(try JSONParser.parse(t), p.column) } catch let e as JSONSyntaxError {
                    error(p.column + (e.line == 1 ? e.column - 1 : 0), "invalid JSON in the value: \(e.message)")
                } catch {}
                return at(.string(t))
            }
            func numbers(_ separators: Set<Character>) -> [Double]? {
                let parts = t.split(whereSeparator: { separators.contains($0) })
                let values = parts.compactMap { Double(String($0)) }
                return values.count == parts.count && parts.count > 1 ? values : nil
            }
            switch type {
            case .float?, .int?:
                if let n = Double(t), n.isFinite { return at(.number(n)) }
            case .bool?:
                if ["true", "1", "yes"].contains(t) { return at(.bool(true)) }
                if ["false", "0", "no"].contains(t) { return at(.bool(false)) }
            case .vector?, .color?:
                if let v = numbers(["|", " "]) { return at(.array(v.map { at(.number($0)) })) }
                if case .color? = type, t.hasPrefix("0x") { return at(.string("#" + t.dropFirst(2))) }
            case .matrix4?:
                if let v = numbers(["|", " "]), v.count == 16 {
                    return at(.array((0..<4).map { r in at(.array(v[(r * 4)..<(r * 4 + 4)].map { at(.number($0)) })) }))
                }
            case .points?:
                let pairs = t.split(whereSeparator: { $0 == " " || $0 == "|" }).map { $0.split(separator: "/").map { Double(String($0)) } }
                if pairs.count > 0, pairs.allSatisfy({ $0.count == 2 && $0[0] != nil && $0[1] != nil }) {
                    return at(.array(pairs.map { xy in at(.array([at(.number(xy[0]!)), at(.number(xy[1]!))])) }))
                }
            case .choice?, .file?, .text?:
                break
            case nil:
                // A parameter the filter does not declare (the reader says so) or a custom shader's own.
                if let n = Double(t), n.isFinite { return at(.number(n)) }
                if t == "true" || t == "false" { return at(.bool(t == "true")) }
                if let v = numbers(["|"]) { return at(.array(v.map { at(.number($0)) })) }
            }
            return at(.string(t))
        }

        /// JSON parsed from a value, its positions moved to the value's place in the string.
        static func rebased(_ v: JSONValue, _ column: Int) -> JSONValue {
            let c = column + (v.line == 1 ? v.column - 1 : 0)
            switch v.kind {
            case .array(let items): return JSONValue(.array(items.map { rebased($0, column) }), line: 1, column: c)
            case .object(let m): return JSONValue(.object(m.map { (key: $0.key, value: rebased($0.value, column)) }), line: 1, column: c)
            default: return JSONValue(v.kind, line: 1, column: c)
            }
        }
    }
}

/// Filters from `--filter` (or a manifest's `filter` column), checked and ready to follow a preset.
public struct InlineChain: Sendable {
    /// The string as given.
    public let text: String
    public let filters: [FilterInstance]
    /// Custom shaders among them, by index in `filters`.
    let shaders: [Int: ShaderDefinition]
}

extension Preset {
    /// This preset with `inline`'s filters after its own chain (after a graph's output, which is the
    /// compiled chain's last picture), in the preset's light.
    public func appending(_ inline: InlineChain) throws -> Preset {
        guard !inline.filters.isEmpty else { return self }
        // A preset that changes no pixel (the default, identity) adds nothing in front: an identity
        // filter ahead of others is not transparent (it rounds between filters), and `--filter sepia`
        // means sepia, the pixels of {"filters": [{"filter": "sepia"}]}.
        let filters = self.filters.onlyIdentity ? [] : self.filters
        let taken = Set(filters.compactMap(\.id))
        if let clash = inline.filters.first(where: { $0.id.map(taken.contains) == true }) {
            throw GPUEncodeError(.preset, path: origin, "id \"\(clash.id!)\" of \(inline.text) is also an id in the preset; rename it")
        }
        var shaders = shaderDefinitions
        for (i, d) in inline.shaders { shaders[filters.count + i] = d }
        return Preset(name: name, description: description, version: version, author: author, tags: tags, filters: filters + inline.filters,
                      encode: encode, light: light, origin: origin, ancestry: ancestry, warnings: warnings, shaderDefinitions: shaders)
    }
}
