/// A small JSON parser that remembers where each value starts, because JSONDecoder reports no
/// line or column and preset authors need both.
public struct JSONValue: Sendable {
    public enum Kind: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONValue])
        /// Members keep their order so errors and warnings come out in file order.
        case object([(key: String, value: JSONValue)])
    }

    public let kind: Kind
    public let line: Int
    public let column: Int

    /// `line` and `column` are 0 for values made in code rather than read from a file.
    public init(_ kind: Kind, line: Int = 0, column: Int = 0) {
        self.kind = kind
        self.line = line
        self.column = column
    }

    public var typeName: String {
        switch kind {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = kind { return members.first { $0.key == key }?.value }
        return nil
    }
}

public struct JSONSyntaxError: Error, Sendable {
    public let line: Int
    public let column: Int
    public let message: String
}

/// RFC 8259, strictly: no trailing commas, comments, single quotes, NaN/Infinity, hex, leading
/// zeros or '+'; no raw control characters in strings; the bytes must be UTF-8 and every \u
/// surrogate paired. Where gpuencode is stricter than the RFC, it is so that a file means one
/// thing to us and to any other reader: duplicate member names are refused, numbers that do not
/// fit a Double (1e400) are refused rather than read as infinity, and "\u0000" is refused because
/// every string may become a C path or a GLSL source, where a NUL would silently cut it short.
/// A UTF-8 byte order mark at the very start is skipped (RFC 8259 §8.1 lets parsers ignore it,
/// and Windows editors write one); anywhere else it is an error.
///
/// Nesting is limited to `maxDepth` levels: the parser recurses once per level, and an input of
/// 30,000 '[' would otherwise overflow the stack, which no error can report.
public enum JSONParser {
    public static let maxDepth = 128

    public static func parse(_ text: String) throws -> JSONValue {
        try parse(bytes: Array(text.utf8))
    }

    /// The bytes of a file as they are: invalid UTF-8 is an error here with its line and column,
    /// where decoding to a String first would have replaced it without a word.
    public static func parse(bytes: [UInt8]) throws -> JSONValue {
        var parser = Parser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            parser.index = 3
            parser.lineStart = 3
        } else if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw parser.error("the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8")
        }
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 1)
        parser.skipWhitespace()
        if parser.index < parser.bytes.count { throw parser.error("unexpected \(parser.describeHere()) after the end of the JSON value") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0
        /// Bytes on this line that are not the first of their character (UTF-8 continuation
        /// bytes), so columns count characters. Only strings hold non-ASCII text, and a string
        /// cannot span lines, so this is kept up in `parseString` alone.
        var lineContinuationBytes = 0

        var column: Int { index - lineStart - lineContinuationBytes + 1 }

        func error(_ message: String) -> JSONSyntaxError {
            JSONSyntaxError(line: line, column: column, message: message)
        }

        /// The byte at `index`, in words for an error message.
        func describeHere() -> String {
            guard index < bytes.count else { return "end of file" }
            let b = bytes[index]
            switch b {
            case 0x20...0x7E: return "character '\(Character(Unicode.Scalar(b)))'"
            case 0x00: return "NUL byte"
            case 0xEF where bytes[index...].starts(with: [0xEF, 0xBB, 0xBF]): return "byte order mark (U+FEFF)"
            default: return "byte 0x\(String(b, radix: 16, uppercase: true))"
            }
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
                case UInt8(ascii: "\n"): index += 1; line += 1; lineStart = index; lineContinuationBytes = 0
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws -> JSONValue {
            guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
            let (l, c) = (line, column)
            func make(_ kind: JSONValue.Kind) -> JSONValue { JSONValue(kind, line: l, column: c) }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                guard depth <= JSONParser.maxDepth else { throw error("nested more than \(JSONParser.maxDepth) levels deep") }
                index += 1
                var members: [(key: String, value: JSONValue)] = []
                // A set beside the ordered list: checking each new name against the list was
                // quadratic (100,000 members took 24 s).
                var names: Set<String> = []
                skipWhitespace()
                if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return make(.object(members)) }
                while true {
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
                        throw error("expected a quoted member name, found \(describeHere())")
                    }
                    let (kl, kc) = (line, column)
                    let key = try parseString()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\", found \(describeHere())") }
                    index += 1
                    skipWhitespace()
                    guard names.insert(key).inserted else {
                        throw JSONSyntaxError(line: kl, column: kc, message: "duplicate member \"\(key)\"")
                    }
                    let value = try parseValue(depth: depth + 1)
                    members.append((key, value))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of file, expected ',' or '}'") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return make(.object(members)) }
                    throw error("expected ',' or '}', found \(describeHere())")
                }
            case UInt8(ascii: "["):
                guard depth <= JSONParser.maxDepth else { throw error("nested more than \(JSONParser.maxDepth) levels deep") }
                index += 1
                var elements: [JSONValue] = []
                skipWhitespace()
                if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1; return make(.array(elements)) }
                while true {
                    skipWhitespace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
                    elements.append(try parseValue(depth: depth + 1))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of file, expected ',' or ']'") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return make(.array(elements)) }
                    throw error("expected ',' or ']', found \(describeHere())")
                }
            case UInt8(ascii: "\""):
                return make(.string(try parseString()))
            case UInt8(ascii: "t"): try literal("true"); return make(.bool(true))
            case UInt8(ascii: "f"): try literal("false"); return make(.bool(false))
            case UInt8(ascii: "n"): try literal("null"); return make(.null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return make(.number(try parseNumber()))
            case UInt8(ascii: "'"):
                throw error("strings are written in double quotes, not single quotes")
            case UInt8(ascii: "/"):
                throw error("JSON has no comments")
            case UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "N"), UInt8(ascii: "I"):
                throw error("invalid number (JSON numbers have no '+', no leading '.', no NaN or Infinity)")
            default:
                throw error("unexpected \(describeHere()), expected a value")
            }
        }

        mutating func literal(_ word: String) throws {
            let w = word.utf8
            guard index + w.count <= bytes.count, bytes[index..<(index + w.count)].elementsEqual(w) else {
                throw error("invalid literal, expected \(word)")
            }
            index += w.count
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func parseNumber() throws -> Double {
            let start = index
            let (l, c) = (line, column)
            func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw error("invalid number: a digit must follow '-'") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if isDigit(index) { throw error("invalid number: no leading zeros") }
                if index < bytes.count, bytes[index] == UInt8(ascii: "x") || bytes[index] == UInt8(ascii: "X") {
                    throw error("invalid number: JSON has no hexadecimal numbers")
                }
            } else {
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard isDigit(index) else { throw error("invalid number: digits expected after '.'") }
                while isDigit(index) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard isDigit(index) else { throw error("invalid number: digits expected in the exponent") }
                while isDigit(index) { index += 1 }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                throw JSONSyntaxError(line: l, column: c, message: "number \(text.count > 40 ? String(text.prefix(40)) + "…" : text) is too large")
            }
            return value
        }

        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("invalid \\u escape: four hex digits expected") }
            var code: UInt32 = 0
            for b in bytes[index..<(index + 4)] {
                let digit: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
                default: throw error("invalid \\u escape: four hex digits expected")
                }
                code = code << 4 | UInt32(digit)
            }
            index += 4
            return code
        }

        /// The length of the UTF-8 sequence at `index` (1 to 4), or nil where it is not valid
        /// UTF-8: a stray continuation byte, an overlong form, a surrogate (ED A0..BF), above
        /// U+10FFFF, or cut short.
        func utf8Length() -> Int? {
            let b0 = bytes[index]
            func cont(_ k: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
                index + k < bytes.count && range.contains(bytes[index + k])
            }
            switch b0 {
            case 0x00...0x7F: return 1
            case 0xC2...0xDF: return cont(1) ? 2 : nil
            case 0xE0: return cont(1, 0xA0...0xBF) && cont(2) ? 3 : nil
            case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : nil
            case 0xED: return cont(1, 0x80...0x9F) && cont(2) ? 3 : nil
            case 0xF0: return cont(1, 0x90...0xBF) && cont(2) && cont(3) ? 4 : nil
            case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : nil
            case 0xF4: return cont(1, 0x80...0x8F) && cont(2) && cont(3) ? 4 : nil
            default: return nil
            }
        }

        mutating func parseString() throws -> String {
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let b = bytes[index]
                switch b {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("unterminated string") }
                    let e = bytes[index]
                    switch e {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "/"): out.append(0x2F)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        let escapeStart = index - 1
                        index += 1
                        var code = try hex4()
                        if (0xDC00...0xDFFF).contains(code) {
                            index = escapeStart
                            throw error("invalid \\u escape: a low surrogate without a high surrogate before it")
                        }
                        if (0xD800...0xDBFF).contains(code) {
                            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                index = escapeStart
                                throw error("invalid \\u escape: a high surrogate without a low surrogate after it")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else {
                                index = escapeStart
                                throw error("invalid \\u escape: a high surrogate without a low surrogate after it")
                            }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        if code == 0 {
                            index = escapeStart
                            throw error("\\u0000 (NUL) is not allowed in a string")
                        }
                        out.append(contentsOf: String(Character(Unicode.Scalar(code)!)).utf8)
                        continue
                    default:
                        throw error("invalid escape \(describeHere()) after '\\' (use \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)")
                    }
                    index += 1
                case 0x0A, 0x0D:
                    throw error("unterminated string (a line break inside a string is written \\n)")
                case 0x00..<0x20:
                    throw error("control character 0x\(String(b, radix: 16, uppercase: true)) inside a string (write it as \\u00\(b < 0x10 ? "0" : "")\(String(b, radix: 16, uppercase: true)))")
                case 0x00...0x7F:
                    out.append(b)
                    index += 1
                default:
                    guard let n = utf8Length() else { throw error("invalid UTF-8 (byte 0x\(String(b, radix: 16, uppercase: true))); save the file as UTF-8") }
                    out.append(contentsOf: bytes[index..<(index + n)])
                    index += n
                    lineContinuationBytes += n - 1
                }
            }
            throw error("unterminated string")
        }
    }
}
