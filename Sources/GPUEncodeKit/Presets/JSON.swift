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

public enum JSONParser {
    public static func parse(_ text: String) throws -> JSONValue {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        if parser.index < parser.bytes.count { throw parser.error("unexpected text after the end of the JSON value") }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0

        var column: Int { index - lineStart + 1 }

        func error(_ message: String) -> JSONSyntaxError {
            JSONSyntaxError(line: line, column: column, message: message)
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
                case UInt8(ascii: "\n"): index += 1; line += 1; lineStart = index
                default: return
                }
            }
        }

        mutating func parseValue() throws -> JSONValue {
            guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
            let (l, c) = (line, column)
            func make(_ kind: JSONValue.Kind) -> JSONValue { JSONValue(kind, line: l, column: c) }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(key: String, value: JSONValue)] = []
                skipWhitespace()
                if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return make(.object(members)) }
                while true {
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a quoted member name") }
                    let key = try parseString()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
                    index += 1
                    skipWhitespace()
                    let value = try parseValue()
                    if members.contains(where: { $0.key == key }) {
                        throw JSONSyntaxError(line: value.line, column: value.column, message: "duplicate member \"\(key)\"")
                    }
                    members.append((key, value))
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of file, expected ',' or '}'") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return make(.object(members)) }
                    throw error("expected ',' or '}'")
                }
            case UInt8(ascii: "["):
                index += 1
                var elements: [JSONValue] = []
                skipWhitespace()
                if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1; return make(.array(elements)) }
                while true {
                    skipWhitespace()
                    elements.append(try parseValue())
                    skipWhitespace()
                    guard index < bytes.count else { throw error("unexpected end of file, expected ',' or ']'") }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return make(.array(elements)) }
                    throw error("expected ',' or ']'")
                }
            case UInt8(ascii: "\""):
                return make(.string(try parseString()))
            case UInt8(ascii: "t"): try literal("true"); return make(.bool(true))
            case UInt8(ascii: "f"): try literal("false"); return make(.bool(false))
            case UInt8(ascii: "n"): try literal("null"); return make(.null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return make(.number(try parseNumber()))
            default:
                throw error("unexpected character '\(Character(Unicode.Scalar(bytes[index])))'")
            }
        }

        mutating func literal(_ word: String) throws {
            let w = Array(word.utf8)
            guard index + w.count <= bytes.count, Array(bytes[index..<(index + w.count)]) == w else {
                throw error("invalid literal, expected \(word)")
            }
            index += w.count
        }

        mutating func parseNumber() throws -> Double {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let s = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - s
            }
            guard digits() > 0 else { throw error("invalid number") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error("invalid number: digits expected after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw error("invalid number: digits expected in exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let value = Double(text) else { throw error("invalid number \(text)") }
            return value
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
                    guard index < bytes.count else { break }
                    let e = bytes[index]
                    index += 1
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
                        guard index + 4 <= bytes.count,
                              let code = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
                        else { throw error("invalid \\u escape") }
                        index += 4
                        out.append(contentsOf: Array(String(Character(Unicode.Scalar(code) ?? "\u{FFFD}")).utf8))
                    default: throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'")
                    }
                case 0x0A, 0x0D:
                    throw error("unterminated string")
                default:
                    out.append(b)
                    index += 1
                }
            }
            throw error("unterminated string")
        }
    }
}
