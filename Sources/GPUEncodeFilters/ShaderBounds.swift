// What a custom shader may ask of the GLSL compiler. A driver compiles what it is given, however
// big: a million-element local array took llvmpipe minutes and more than 6 GB, and a compile cannot
// be interrupted. So the source is bounded before any compile, by reading it: every shader these
// bounds accept compiles in well under a second on llvmpipe (docs/presets.md, "Custom shaders").
// The preset reader applies them, so `gpuencode validate` and a run refuse the same shaders.

/// Static bounds on a custom shader's source: its length, the elements its arrays declare, and
/// how far its macros and functions expand (the compiler expands both in full: a macro or a
/// function used twice by the next one, thirty deep, is a billion copies).
public enum ShaderBounds {
    /// Bytes of GLSL: hand-written shaders are a few KiB; GPUImage's largest is under 8 KiB.
    public static let maxSourceBytes = 64 << 10
    /// Scalar elements of every array the shader declares, together (globals, locals, function
    /// parameters, struct members; a vec4 counts 4, a mat4 16): a 64x64 kernel of floats fits.
    public static let maxArrayElements = 4096
    /// Tokens after macro expansion.
    public static let maxExpandedTokens = 200_000
    /// Tokens of `main` with every function it calls copied in, as the compiler inlines them.
    public static let maxInlinedTokens = 200_000
    /// Brackets open at once (parentheses, braces, square brackets): the compile grows with the
    /// square of the depth (5000 nested parentheses took llvmpipe 14 s; 256 take 0.6 s).
    public static let maxNesting = 256

    /// The first problem with `source`, with its line in the source as written; nil when it is within bounds.
    public static func problem(in source: String) -> (line: Int, message: String)? {
        let bytes = source.utf8.count
        if bytes > maxSourceBytes {
            return (1, "the source is \(bytes) bytes; a custom shader has at most \(maxSourceBytes) (64 KiB)")
        }
        do {
            let tokens = try GLSLMacros.expand(GLSLTokens.scan(source))
            try GLSLTokens.checkNesting(tokens)
            let functions = try GLSLCalls.check(tokens)
            try GLSLArrays.check(tokens, copies: functions.copies(at:))
            return nil
        } catch let e as ShaderBoundError {
            return (e.line, e.message)
        } catch {
            return (1, "\(error)")
        }
    }
}

struct ShaderBoundError: Error {
    let line: Int
    let message: String
}

struct GLSLToken: Equatable {
    enum Kind: Equatable { case identifier, number, symbol, directive }
    let kind: Kind
    let text: String
    let line: Int
}

/// GLSL ES source as tokens: comments dropped, a preprocessor line kept whole as one `directive`.
enum GLSLTokens {
    static func checkNesting(_ tokens: [GLSLToken]) throws {
        var depth = 0
        for t in tokens {
            if t.text == "(" || t.text == "[" || t.text == "{" { depth += 1 }
            if t.text == ")" || t.text == "]" || t.text == "}" { depth -= 1 }
            if depth > ShaderBounds.maxNesting {
                throw ShaderBoundError(line: t.line, message: "brackets nest more than \(ShaderBounds.maxNesting) deep; a custom shader's nest at most that deep")
            }
        }
    }

    static func scan(_ source: String) -> [GLSLToken] {
        let s = Array(source.unicodeScalars)
        var tokens: [GLSLToken] = []
        var i = 0, line = 1
        var atLineStart = true
        func isIdent(_ c: Unicode.Scalar) -> Bool { c == "_" || (c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c))) }
        while i < s.count {
            let c = s[i]
            if c == "\n" { line += 1; i += 1; atLineStart = true; continue }
            if c == " " || c == "\t" || c == "\r" || c == "\u{0B}" || c == "\u{0C}" { i += 1; continue }
            if c == "/" && i + 1 < s.count && s[i + 1] == "/" {
                while i < s.count && s[i] != "\n" { i += 1 }
                continue
            }
            if c == "/" && i + 1 < s.count && s[i + 1] == "*" {
                i += 2
                while i < s.count && !(s[i] == "*" && i + 1 < s.count && s[i + 1] == "/") {
                    if s[i] == "\n" { line += 1 }
                    i += 1
                }
                i += 2
                continue
            }
            if c == "#" && atLineStart {
                // The directive to its end of line (a backslash continues it).
                let start = line
                var text = ""
                while i < s.count && s[i] != "\n" {
                    if s[i] == "\\" && i + 1 < s.count && s[i + 1] == "\n" { i += 2; line += 1; text += " "; continue }
                    text.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append(GLSLToken(kind: .directive, text: text, line: start))
                continue
            }
            atLineStart = false
            if isIdent(c) && !("0"..."9").contains(c) {
                var text = ""
                while i < s.count && isIdent(s[i]) { text.unicodeScalars.append(s[i]); i += 1 }
                tokens.append(GLSLToken(kind: .identifier, text: text, line: line))
                continue
            }
            if ("0"..."9").contains(c) || (c == "." && i + 1 < s.count && ("0"..."9").contains(s[i + 1])) {
                var text = ""
                while i < s.count, isIdent(s[i]) || s[i] == "." || ((s[i] == "+" || s[i] == "-") && (text.last == "e" || text.last == "E") && !text.lowercased().hasPrefix("0x")) {
                    text.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append(GLSLToken(kind: .number, text: text, line: line))
                continue
            }
            // Two-character operators that matter to constant expressions; others as single characters.
            if i + 1 < s.count, ["<<", ">>", "##"].contains(String(c) + String(s[i + 1])) {
                tokens.append(GLSLToken(kind: .symbol, text: String(c) + String(s[i + 1]), line: line))
                i += 2
                continue
            }
            tokens.append(GLSLToken(kind: .symbol, text: String(c), line: line))
            i += 1
        }
        return tokens
    }
}

/// `#define` expanded as the compiler's preprocessor would, up to `maxExpandedTokens` (a macro
/// that uses the one before it twice, thirty deep, would otherwise be a billion tokens). Every
/// branch of `#if` is read (a bound holds whichever one is compiled).
enum GLSLMacros {
    struct Macro {
        var parameters: [String]?
        var body: [GLSLToken]
    }

    static func expand(_ tokens: [GLSLToken]) throws -> [GLSLToken] {
        var macros: [String: Macro] = [:]
        var out: [GLSLToken] = []
        var pending: [GLSLToken] = []
        func emit(_ t: GLSLToken) throws {
            out.append(t)
            if out.count > ShaderBounds.maxExpandedTokens {
                throw ShaderBoundError(line: t.line, message: "the source expands (its macros) to more than \(ShaderBounds.maxExpandedTokens) tokens; a custom shader has at most that many")
            }
        }
        /// Expands `list` (tokens of one line's worth) with `active` macros being expanded (no recursion).
        func run(_ list: [GLSLToken], line: Int?, active: Set<String>, into sink: (GLSLToken) throws -> Void) throws {
            var i = 0
            while i < list.count {
                let t = list[i]
                guard t.kind == .identifier, let m = macros[t.text], !active.contains(t.text) else {
                    try sink(GLSLToken(kind: t.kind, text: t.text, line: line ?? t.line))
                    i += 1
                    continue
                }
                let at = line ?? t.line
                guard let parameters = m.parameters else {
                    try run(m.body, line: at, active: active.union([t.text]), into: sink)
                    i += 1
                    continue
                }
                // A function-like macro: its arguments, split at top-level commas.
                guard i + 1 < list.count, list[i + 1].text == "(" else {
                    try sink(GLSLToken(kind: t.kind, text: t.text, line: at))
                    i += 1
                    continue
                }
                var args: [[GLSLToken]] = [[]]
                var depth = 0
                var j = i + 2
                while j < list.count {
                    let a = list[j]
                    if a.text == "(" { depth += 1 }
                    if a.text == ")" { if depth == 0 { break }; depth -= 1 }
                    if a.text == "," && depth == 0 { args.append([]) } else { args[args.count - 1].append(a) }
                    j += 1
                }
                var body: [GLSLToken] = []
                for b in m.body {
                    if b.kind == .identifier, let k = parameters.firstIndex(of: b.text), k < args.count {
                        // Arguments are expanded before substitution, as the C preprocessor does.
                        try run(args[k], line: at, active: active, into: { body.append($0) })
                        if body.count > ShaderBounds.maxExpandedTokens {
                            throw ShaderBoundError(line: at, message: "the source expands (its macros) to more than \(ShaderBounds.maxExpandedTokens) tokens; a custom shader has at most that many")
                        }
                    } else {
                        body.append(b)
                    }
                }
                try run(body, line: at, active: active.union([t.text]), into: sink)
                i = j + 1
            }
        }
        func flush() throws {
            try run(pending, line: nil, active: [], into: emit)
            pending.removeAll()
        }
        for t in tokens {
            guard t.kind == .directive else { pending.append(t); continue }
            // A macro defined below a use does not apply to it: expand what came before first.
            try flush()
            let words = GLSLTokens.scan(String(t.text.dropFirst()))
            guard let keyword = words.first?.text else { continue }
            if keyword == "undef", words.count > 1 { macros[words[1].text] = nil; continue }
            guard keyword == "define", words.count > 1 else { continue }
            let name = words[1].text
            var rest = Array(words.dropFirst(2))
            if rest.contains(where: { $0.text == "##" || $0.text == "#" }) {
                throw ShaderBoundError(line: t.line, message: "#define \(name): token pasting (##) and stringizing (#) are not taken in a custom shader")
            }
            var parameters: [String]? = nil
            // A function-like macro has its "(" right after the name, with no space between.
            let afterName = t.text.range(of: name).map { t.text[$0.upperBound...] }
            if afterName?.first == "(", let close = rest.firstIndex(where: { $0.text == ")" }) {
                parameters = rest[1..<close].filter { $0.kind == .identifier }.map(\.text)
                rest = Array(rest[(close + 1)...])
            }
            macros[name] = Macro(parameters: parameters, body: rest.map { GLSLToken(kind: $0.kind, text: $0.text, line: t.line) })
        }
        try flush()
        return out
    }
}

/// The arrays a shader declares, by reading its declarations: a type (built-in or a struct), then
/// names, each with its sizes; sizes must be whole numbers or constants made of them.
enum GLSLArrays {
    /// Scalars in one value of each built-in type.
    static let builtinTypes: [String: Int] = {
        var t: [String: Int] = ["float": 1, "int": 1, "uint": 1, "bool": 1, "double": 1]
        for n in 2...4 {
            for p in ["", "i", "u", "b", "d"] { t["\(p)vec\(n)"] = n }
            t["mat\(n)"] = n * n
            for m in 2...4 { t["mat\(n)x\(m)"] = n * m }
        }
        for s in ["sampler2D", "sampler3D", "samplerCube", "sampler2DArray", "sampler2DShadow", "samplerCubeShadow",
                  "sampler2DArrayShadow", "isampler2D", "isampler3D", "isamplerCube", "isampler2DArray", "usampler2D",
                  "usampler3D", "usamplerCube", "usampler2DArray", "samplerExternalOES"] { t[s] = 1 }
        return t
    }()

    static let qualifiers: Set<String> = ["const", "in", "out", "inout", "uniform", "varying", "attribute", "highp", "mediump",
                                          "lowp", "flat", "smooth", "centroid", "invariant", "precise", "coherent", "volatile",
                                          "restrict", "readonly", "writeonly", "shared", "buffer"]

    /// `copies`: how many times the code at a token is copied by inlining (an array local to a
    /// function called eight times is eight arrays: that took llvmpipe 33 s and 1.2 GB at 4096 each).
    static func check(_ tokens: [GLSLToken], copies: (Int) -> Double) throws {
        var structs: [String: Int] = [:]
        var constants: [String: Double] = [:]
        var total = 0
        // `const int N = 4 * 8;`: a constant a size may use.
        for i in tokens.indices where tokens[i].text == "const" {
            var j = i + 1
            while j < tokens.count && qualifiers.contains(tokens[j].text) { j += 1 }
            guard j + 3 < tokens.count, ["int", "uint"].contains(tokens[j].text), tokens[j + 1].kind == .identifier, tokens[j + 2].text == "=",
                  let end = tokens[(j + 3)...].firstIndex(where: { $0.text == ";" || $0.text == "," }) else { continue }
            if let v = try? ConstantExpression.evaluate(Array(tokens[(j + 3)..<end]), constants: constants) { constants[tokens[j + 1].text] = v }
        }
        /// The product of the `[n]` sizes from `at` on (nil for an unsized `[]`), moving `at` past them.
        func sizes(_ at: inout Int, line: Int, name: String) throws -> Double? {
            var count: Double? = 1
            while at < tokens.count && tokens[at].text == "[" {
                var depth = 0
                var j = at
                repeat {
                    if tokens[j].text == "[" { depth += 1 }
                    if tokens[j].text == "]" { depth -= 1 }
                    j += 1
                } while j < tokens.count && depth > 0
                let inside = Array(tokens[(at + 1)..<max(at + 1, j - 1)])
                if inside.isEmpty {
                    count = nil
                } else {
                    guard let v = try? ConstantExpression.evaluate(inside, constants: constants), v >= 0 else {
                        throw ShaderBoundError(line: line, message: "the size of \(name) must be a whole number, or a constant (const int, #define) made of whole numbers")
                    }
                    count = count.map { $0 * v }
                }
                at = j
            }
            return count
        }
        func add(_ elements: Double, at index: Int, into total: inout Int, line: Int, name: String) throws {
            let n = copies(index)
            guard elements * n <= Double(ShaderBounds.maxArrayElements - total) else {
                let inlined = n > 1 ? " (its function is inlined \(formatCount(n)) times)" : ""
                throw ShaderBoundError(line: line, message: "\(name) makes the shader's arrays hold more than \(ShaderBounds.maxArrayElements) elements (a vec4 counts 4)\(inlined); a custom shader's arrays hold at most that many in all")
            }
            total += Int(elements * n)
        }
        /// Declarators from `j` on (`a[4], b = ..., c`) of a type of `per` scalars with `typeDims`
        /// elements; adds their arrays to `sum`; returns where they end.
        func declarators(from start: Int, per: Int, typeDims: Double?, line: Int, sum: inout Int, counted: Bool = true) throws -> Int {
            var j = start
            while j < tokens.count && tokens[j].kind == .identifier {
                let name = tokens[j].text
                j += 1
                // A function's name: its parameters are declarations of their own, found later.
                if j < tokens.count && tokens[j].text == "(" { return j }
                let own = try sizes(&j, line: line, name: name)
                var elements = typeDims.flatMap { d in own.map { d * $0 } }
                // An initializer runs to the next top-level comma or the end of the declaration; an
                // unsized array has as many elements as its constructor's arguments.
                if j < tokens.count && tokens[j].text == "=" {
                    var depth = 0
                    var commas = 0
                    while j < tokens.count {
                        let x = tokens[j].text
                        if x == "(" || x == "[" || x == "{" { depth += 1 }
                        if x == ")" || x == "]" || x == "}" { if depth == 0 { break }; depth -= 1 }
                        if depth == 0 && (x == "," || x == ";") { break }
                        if depth == 1 && x == "," { commas += 1 }
                        j += 1
                    }
                    if elements == nil { elements = Double(commas + 1) }
                }
                if counted, let e = elements, e > 1 { try add(Double(per) * e, at: start, into: &sum, line: line, name: name) }
                guard j + 1 < tokens.count, tokens[j].text == ",", tokens[j + 1].kind == .identifier,
                      builtinTypes[tokens[j + 1].text] == nil, structs[tokens[j + 1].text] == nil, !qualifiers.contains(tokens[j + 1].text) else { break }
                j += 1
            }
            return j
        }
        var i = 0
        while i < tokens.count {
            let t = tokens[i]
            if t.text == "struct", i + 2 < tokens.count, tokens[i + 1].kind == .identifier, tokens[i + 2].text == "{" {
                // A struct's size is its members'; its arrays count where the struct is used.
                let name = tokens[i + 1].text
                var scalars = 0
                var j = i + 3
                while j < tokens.count && tokens[j].text != "}" {
                    if let per = builtinTypes[tokens[j].text] ?? structs[tokens[j].text] {
                        var k = j + 1
                        let dims = try sizes(&k, line: tokens[j].line, name: "a member of struct \(name)")
                        var members = 0
                        j = try declarators(from: k, per: per, typeDims: dims, line: tokens[j].line, sum: &members)
                        // Members that are no arrays count one value each.
                        scalars += max(members, per)
                        guard scalars <= ShaderBounds.maxArrayElements else {
                            throw ShaderBoundError(line: t.line, message: "struct \(name) holds more than \(ShaderBounds.maxArrayElements) elements; a custom shader's arrays hold at most that many in all")
                        }
                    } else {
                        j += 1
                    }
                }
                structs[name] = max(1, scalars)
                i = try declarators(from: j + 1, per: structs[name]!, typeDims: 1, line: t.line, sum: &total)
                continue
            }
            guard let per = builtinTypes[t.text] ?? structs[t.text] else { i += 1; continue }
            // Uniform arrays are held by the GPU's uniform storage, whose own limits the pass
            // planner checks (with its own message); the compiler does not build them.
            var k = i - 1
            var uniform = false
            while k >= 0 && qualifiers.contains(tokens[k].text) { uniform = uniform || tokens[k].text == "uniform"; k -= 1 }
            if uniform {
                var ignored = 0
                var j = i + 1
                let typeDims = try sizes(&j, line: t.line, name: "an array of \(t.text)")
                i = max(try declarators(from: j, per: per, typeDims: typeDims, line: t.line, sum: &ignored, counted: false), i + 1)
                continue
            }
            var j = i + 1
            let typeDims = try sizes(&j, line: t.line, name: "an array of \(t.text)")
            if j < tokens.count, tokens[j].text == "(" {
                // A constructor: `float[3](...)` is an array value; `vec4(...)` is none.
                if let d = typeDims, d > 1 { try add(Double(per) * d, at: i, into: &total, line: t.line, name: "\(t.text)[\(formatCount(d))]") }
                i = j
                continue
            }
            i = max(try declarators(from: j, per: per, typeDims: typeDims, line: t.line, sum: &total), i + 1)
        }
    }

    static func formatCount(_ v: Double) -> String { v < 1e15 ? String(Int(v)) : "\(v)" }
}

/// The size of `main` with every function it calls copied in, as GLSL compilers inline them.
enum GLSLCalls {
    struct Functions {
        /// Each function's tokens from its name to the end of its body, and how many copies of it inlining makes.
        var spans: [(range: Range<Int>, copies: Double)] = []

        /// Copies of the code at token `index` (1 outside functions).
        func copies(at index: Int) -> Double {
            spans.first { $0.range.contains(index) }?.copies ?? 1
        }
    }

    static func check(_ tokens: [GLSLToken]) throws -> Functions {
        // Function bodies: `type name ( ... ) {` at the top level.
        var bodies: [String: (name: Int, start: Int, end: Int, line: Int)] = [:]
        var depth = 0
        var i = 0
        while i < tokens.count {
            let t = tokens[i]
            if t.text == "{" { depth += 1 }
            if t.text == "}" { depth -= 1 }
            if depth == 0, t.kind == .identifier, i + 1 < tokens.count, tokens[i + 1].text == "(", i > 0,
               tokens[i - 1].kind == .identifier || tokens[i - 1].text == "]" {
                var j = i + 1
                var parens = 0
                repeat {
                    if tokens[j].text == "(" { parens += 1 }
                    if tokens[j].text == ")" { parens -= 1 }
                    j += 1
                } while j < tokens.count && parens > 0
                if j < tokens.count && tokens[j].text == "{" {
                    var braces = 0
                    var k = j
                    repeat {
                        if tokens[k].text == "{" { braces += 1 }
                        if tokens[k].text == "}" { braces -= 1 }
                        k += 1
                    } while k < tokens.count && braces > 0
                    bodies[t.text] = (i, j, k, t.line)
                    i = k
                    continue
                }
            }
            i += 1
        }
        /// The functions a body calls, once per call.
        func calls(in name: String) -> [String] {
            guard let body = bodies[name] else { return [] }
            return (body.start..<max(body.start, body.end - 1)).compactMap { k in
                tokens[k].kind == .identifier && tokens[k + 1].text == "(" && bodies[tokens[k].text] != nil ? tokens[k].text : nil
            }
        }
        let callees = Dictionary(uniqueKeysWithValues: bodies.keys.map { ($0, calls(in: $0)) })
        var cost: [String: Double] = [:]
        var visiting: Set<String> = []
        func inlined(_ name: String) -> Double {
            if let c = cost[name] { return c }
            guard let body = bodies[name], !visiting.contains(name) else { return 0 }
            visiting.insert(name)
            var total = Double(body.end - body.start)
            for callee in callees[name] ?? [] {
                total += inlined(callee)
                if total > 1e18 { break }
            }
            visiting.remove(name)
            cost[name] = total
            return total
        }
        for (name, body) in bodies.sorted(by: { $0.value.start < $1.value.start }) {
            let size = inlined(name)
            if size > Double(ShaderBounds.maxInlinedTokens) {
                throw ShaderBoundError(line: body.line, message: "\(name)() is more than \(ShaderBounds.maxInlinedTokens) tokens with the functions it calls copied in, as the compiler inlines them; a custom shader's functions stay within that")
            }
        }
        // Copies of each function: main is one; another is as many as its call sites in each
        // caller times that caller's copies (a function nothing calls counts once).
        var copies: [String: Double] = [:]
        func count(_ name: String) -> Double {
            if let c = copies[name] { return c }
            if name == "main" { return 1 }
            guard !visiting.contains(name) else { return 1 }
            visiting.insert(name)
            var n = 0.0
            for (caller, list) in callees { n += Double(list.filter { $0 == name }.count) * count(caller) }
            visiting.remove(name)
            copies[name] = max(1, min(n, 1e18))
            return copies[name]!
        }
        var functions = Functions()
        for (name, body) in bodies { functions.spans.append((body.name..<body.end, count(name))) }
        return functions
    }
}

/// Integer constant expressions of array sizes: whole-number literals (decimal, hex, octal, a `u`
/// suffix), known constants, + - * / % << >> & | ^ ~, parentheses and int()/uint() of them.
enum ConstantExpression {
    struct NotConstant: Error {}

    static func evaluate(_ tokens: [GLSLToken], constants: [String: Double]) throws -> Double {
        var p = Parser(tokens: tokens, constants: constants)
        let v = try p.expression(0)
        guard p.at == tokens.count, v.isFinite else { throw NotConstant() }
        return v.rounded(.towardZero)
    }

    struct Parser {
        let tokens: [GLSLToken]
        let constants: [String: Double]
        var at = 0
        var depth = 0

        static let precedence: [String: Int] = ["|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6]

        mutating func expression(_ minimum: Int) throws -> Double {
            depth += 1
            defer { depth -= 1 }
            guard depth < 64 else { throw NotConstant() }
            var left = try unary()
            while at < tokens.count, let p = Self.precedence[tokens[at].text], p > minimum {
                let op = tokens[at].text
                at += 1
                let right = try expression(p)
                left = try apply(op, left, right)
            }
            return left
        }

        func apply(_ op: String, _ a: Double, _ b: Double) throws -> Double {
            func int(_ x: Double) throws -> Int64 {
                guard x.isFinite, abs(x) < 9e15 else { throw NotConstant() }
                return Int64(x)
            }
            switch op {
            case "+": return a + b
            case "-": return a - b
            case "*": return a * b
            case "/": guard b != 0 else { throw NotConstant() }; return (a / b).rounded(.towardZero)
            case "%": guard b != 0 else { throw NotConstant() }; return Double(try int(a) % int(b))
            case "<<": guard (0...62).contains(b) else { throw NotConstant() }; return a * Double(Int64(1) << Int64(b))
            case ">>": guard (0...62).contains(b) else { throw NotConstant() }; return Double(try int(a) >> int(b))
            case "&": return Double(try int(a) & int(b))
            case "|": return Double(try int(a) | int(b))
            case "^": return Double(try int(a) ^ int(b))
            default: throw NotConstant()
            }
        }

        mutating func unary() throws -> Double {
            guard at < tokens.count else { throw NotConstant() }
            let t = tokens[at]
            at += 1
            switch t.text {
            case "-": return -(try unary())
            case "+": return try unary()
            case "~": return Double(~Int64(try unary()))
            case "(":
                let v = try expression(0)
                guard at < tokens.count, tokens[at].text == ")" else { throw NotConstant() }
                at += 1
                return v
            case "int", "uint", "float":
                guard at < tokens.count, tokens[at].text == "(" else { throw NotConstant() }
                at += 1
                let v = try expression(0)
                guard at < tokens.count, tokens[at].text == ")" else { throw NotConstant() }
                at += 1
                return t.text == "float" ? v : v.rounded(.towardZero)
            default:
                if t.kind == .number { return try literal(t.text) }
                if let v = constants[t.text] { return v }
                throw NotConstant()
            }
        }

        func literal(_ text: String) throws -> Double {
            var s = text.lowercased()
            if s.hasSuffix("u") { s.removeLast() }
            if s.hasPrefix("0x"), let v = UInt64(s.dropFirst(2), radix: 16) { return Double(v) }
            if s.count > 1, s.hasPrefix("0"), s.allSatisfy({ $0.isNumber }), let v = UInt64(s.dropFirst(), radix: 8) { return Double(v) }
            if s.hasSuffix("f") { s.removeLast() }
            guard let v = Double(s), v.isFinite else { throw NotConstant() }
            return v
        }
    }
}
