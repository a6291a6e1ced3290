/// Writes JSON the way presets are written by hand: members in the order given (so output is
/// stable), 2-space indentation, and short arrays of numbers or strings (vectors, colours, matrix
/// rows, keyframes) on one line.
public enum JSONWriter {
    public static func write(_ value: JSONValue) -> String {
        var out = ""
        write(value, indent: 0, into: &out)
        return out + "\n"
    }

    static func write(_ value: JSONValue, indent: Int, into out: inout String) {
        let pad = String(repeating: " ", count: indent)
        let inner = String(repeating: " ", count: indent + 2)
        switch value.kind {
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{\n"
            for (i, m) in members.enumerated() {
                out += inner + quote(m.key) + ": "
                write(m.value, indent: indent + 2, into: &out)
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += pad + "}"
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            if let line = inline(value), line.count + indent <= 100 {
                out += line
                return
            }
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += inner
                write(item, indent: indent + 2, into: &out)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += pad + "]"
        default:
            out += scalar(value)!
        }
    }

    /// One-line form for arrays of scalars and arrays of such arrays; nil for anything with objects.
    static func inline(_ value: JSONValue) -> String? {
        switch value.kind {
        case .array(let items):
            var parts: [String] = []
            for item in items {
                guard let s = inline(item) else { return nil }
                parts.append(s)
            }
            return "[" + parts.joined(separator: ", ") + "]"
        case .object: return nil
        default: return scalar(value)
        }
    }

    package static func scalar(_ value: JSONValue) -> String? {
        switch value.kind {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let n): return number(n)
        case .string(let s): return quote(s)
        default: return nil
        }
    }

    public static func number(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n == n.rounded() && abs(n) < 1e15 { return String(Int64(n)) }
        return String(n)
    }

    public static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}

/// Short constructors for building JSON in code (schemas, `presets show`).
extension JSONValue {
    public static func object(_ members: [(String, JSONValue)]) -> JSONValue {
        JSONValue(.object(members.map { (key: $0.0, value: $0.1) }))
    }
    public static func array(_ items: [JSONValue]) -> JSONValue { JSONValue(.array(items)) }
    public static func string(_ s: String) -> JSONValue { JSONValue(.string(s)) }
    public static func number(_ n: Double) -> JSONValue { JSONValue(.number(n)) }
    public static func number(_ n: Int) -> JSONValue { JSONValue(.number(Double(n))) }
    public static func bool(_ b: Bool) -> JSONValue { JSONValue(.bool(b)) }
    public static var null: JSONValue { JSONValue(.null) }
    public static func strings(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
    public static func numbers(_ list: [Double]) -> JSONValue { .array(list.map { .number($0) }) }

    /// The same value with its positions dropped (for comparing trees).
    public var members: [(key: String, value: JSONValue)] {
        if case .object(let m) = kind { return m }
        return []
    }
}
