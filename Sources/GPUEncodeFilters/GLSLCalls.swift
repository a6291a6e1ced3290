// How far a custom shader's functions expand when inlined, for ShaderBounds.

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
