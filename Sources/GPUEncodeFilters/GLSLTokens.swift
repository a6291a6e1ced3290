// GLSL ES source read as tokens, for ShaderBounds (custom shaders are bounded by reading them).

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
