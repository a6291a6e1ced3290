// The preprocessor's #define, expanded for ShaderBounds.

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
