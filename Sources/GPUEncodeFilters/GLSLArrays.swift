// The arrays a custom shader declares, counted for ShaderBounds.

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
