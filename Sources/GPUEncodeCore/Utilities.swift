import Glibc

/// FNV-1a, 64 bits: a stable hash (the same on every machine and run, unlike `Hasher`) for shard
/// assignment, preset digests and, with `--hash`, input contents. Not for security.
public struct FNV1a64: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var h = value
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        value = h
    }

    public mutating func update(_ text: String) {
        var t = text
        t.withUTF8 { update(UnsafeRawBufferPointer($0)) }
    }

    public static func hash(_ text: String) -> UInt64 {
        var h = FNV1a64()
        h.update(text)
        return h.value
    }

    /// 16 lowercase hex digits.
    public static func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// `fnv1a64:` and the hex digest of a file's bytes.
    public static func file(_ path: String) throws -> String {
        // Regular files only (a FIFO input would be consumed here, a device never ends).
        let file: SafeFile
        do { file = try SafeFile(path, kind: .media) } catch let e as FileReadError {
            throw GPUEncodeError(.input, path: path, "cannot read: \(e.reason)")
        }
        var h = FNV1a64()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n: Int
            do { n = try chunk.withUnsafeMutableBytes { try file.read(into: $0) } } catch let e as FileReadError {
                throw GPUEncodeError(.input, path: path, "read error: \(e.reason)")
            }
            if n == 0 { break }
            chunk.withUnsafeBytes { h.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return "fnv1a64:" + hex(h.value)
    }
}

/// Size and modification time of a file (nil when it does not exist).
package struct FileStamp: Equatable {
    package let size: Int64
    /// Nanoseconds since the epoch.
    package let mtime: Int64

    package init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        size = Int64(st.st_size)
        mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    }
}

/// Shell-style patterns (`*.mp4`) matched against a file's name, as fnmatch(3) does.
package func globMatches(_ pattern: String, _ name: String) -> Bool {
    fnmatch(pattern, name, 0) == 0
}

/// The entries of a folder, sorted by name (byte order), without `.` and `..`; nil if it cannot be read.
package func directoryEntries(_ dir: String) -> [String]? {
    guard let d = opendir(dir) else { return nil }
    defer { closedir(d) }
    var names: [String] = []
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        names.append(name)
    }
    return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
}

/// `a/b` + `c` without doubled slashes.
package func joinPath(_ a: String, _ b: String) -> String {
    if a.isEmpty || a == "." { return b }
    if b.isEmpty { return a }
    return a.hasSuffix("/") ? a + b : a + "/" + b
}

/// Removes `.` components, doubled slashes and a trailing slash; keeps `..` (no symlink resolution).
package func normalizePath(_ path: String) -> String {
    let absolute = path.hasPrefix("/")
    var parts: [Substring] = []
    for p in path.split(separator: "/", omittingEmptySubsequences: true) {
        if p == "." { continue }
        if p == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
        parts.append(p)
    }
    let joined = parts.joined(separator: "/")
    if absolute { return "/" + joined }
    return joined.isEmpty ? "." : joined
}

/// The path made absolute against the working directory, then normalised: the key for collisions.
package func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return normalizePath(path) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return normalizePath(path) }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return normalizePath(cwd + "/" + path)
}

/// The path with its folder resolved to a real path (symlinks, `.` and `..`), keeping the file
/// name as it is; a folder not made yet resolves through its nearest existing ancestor.
package func canonicalOutputPath(_ path: String) -> String {
    let (dir, base) = splitPath(absolutePath(path))
    var existing = dir
    var missing: [String] = []
    while true {
        if let resolved = realPath(existing) {
            return joinPath(missing.isEmpty ? resolved : joinPath(resolved, missing.joined(separator: "/")), base)
        }
        if existing == "/" || existing.isEmpty { return joinPath(dir, base) }
        let (parent, name) = splitPath(existing)
        missing.insert(name, at: 0)
        existing = parent
    }
}

/// Creates a folder and its parents (mkdir -p).
package func makeDirectories(_ path: String) throws {
    if path.isEmpty || isDirectory(path) { return }
    let parent = splitPath(path).dir
    if parent != path { try makeDirectories(parent) }
    if mkdir(path, 0o755) != 0 && errno != EEXIST {
        throw GPUEncodeError(.outputCreate, path: path, "cannot create the folder: \(errnoString())")
    }
}

/// Writes a text file through a temporary and a rename (reports and state: never half-written).
package func writeTextAtomically(_ text: String, to path: String) throws {
    let dir = splitPath(path).dir
    try makeDirectories(dir)
    try writeFileAtomically(Array(text.utf8), to: path, overwrite: true, removingStale: false)
}

/// UTC time as ISO 8601 (`2024-05-01T12:00:00Z`).
package func isoTimestamp() -> String {
    var t = time(nil)
    var parts = tm()
    gmtime_r(&t, &parts)
    func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}

/// Number of online CPUs.
public func onlineCores() -> Int {
    max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}

/// Minimal RFC 4180 CSV: commas, double-quoted fields with `""` escapes, CRLF or LF line ends.
/// Returns rows with the 1-based line each started on.
package func parseCSV(_ text: String) throws -> [(line: Int, fields: [String])] {
    var rows: [(Int, [String])] = []
    var field = ""
    var fields: [String] = []
    var inQuotes = false
    var line = 1
    var rowLine = 1
    var fieldStarted = false
    var chars = Array(text.unicodeScalars)
    if chars.first == "\u{FEFF}" { chars.removeFirst() }
    var i = 0
    func endRow() {
        fields.append(field)
        field = ""
        if !(fields.count == 1 && fields[0].isEmpty) { rows.append((rowLine, fields)) }
        fields = []
    }
    while i < chars.count {
        let c = chars[i]
        if inQuotes {
            if c == "\"" {
                if i + 1 < chars.count && chars[i + 1] == "\"" { field.unicodeScalars.append("\""); i += 1 } else { inQuotes = false }
            } else {
                if c == "\n" { line += 1 }
                field.unicodeScalars.append(c)
            }
        } else {
            switch c {
            case "\"" where !fieldStarted: inQuotes = true; fieldStarted = true
            case ",": fields.append(field); field = ""; fieldStarted = false
            case "\r": break
            case "\n":
                endRow(); line += 1; rowLine = line; fieldStarted = false
            default: field.unicodeScalars.append(c); fieldStarted = true
            }
        }
        i += 1
    }
    if inQuotes { throw GPUEncodeError(.usage, "line \(rowLine): unterminated quoted field") }
    if !field.isEmpty || !fields.isEmpty { endRow() }
    return rows
}

package func xmlEscape(_ s: String) -> String {
    var out = ""
    for u in s.unicodeScalars {
        switch u {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&apos;"
        default:
            // XML 1.0 forbids most control characters, even escaped.
            if u.value < 0x20 && u != "\n" && u != "\t" && u != "\r" { out += "?" } else { out.unicodeScalars.append(u) }
        }
    }
    return out
}

extension JSONValue {
    package static func str(_ s: String?) -> JSONValue { s.map { JSONValue(.string($0)) } ?? JSONValue(.null) }
    package static func num(_ n: Double?) -> JSONValue { n.flatMap { $0.isFinite ? JSONValue(.number($0)) : nil } ?? JSONValue(.null) }
    package static func int(_ n: Int?) -> JSONValue { n.map { JSONValue(.number(Double($0))) } ?? JSONValue(.null) }
    package static func int64(_ n: Int64?) -> JSONValue { n.map { JSONValue(.number(Double($0))) } ?? JSONValue(.null) }
    package static func obj(_ members: [(String, JSONValue)]) -> JSONValue { JSONValue(.object(members.map { (key: $0.0, value: $0.1) })) }
    package static func arr(_ items: [JSONValue]) -> JSONValue { JSONValue(.array(items)) }

    package var stringValue: String? { if case .string(let s) = kind { return s }; return nil }
    package var numberValue: Double? { if case .number(let n) = kind { return n }; return nil }
    var boolValue: Bool? { if case .bool(let b) = kind { return b }; return nil }
    package var arrayValue: [JSONValue]? { if case .array(let a) = kind { return a }; return nil }
    package var objectMembers: [(key: String, value: JSONValue)]? { if case .object(let m) = kind { return m }; return nil }
    package var isNull: Bool { if case .null = kind { return true }; return false }
}

/// One JSON value on one line (JSON-lines progress events).
package func compactJSON(_ value: JSONValue) -> String {
    switch value.kind {
    case .object(let members):
        return "{" + members.map { JSONWriter.quote($0.key) + ":" + compactJSON($0.value) }.joined(separator: ",") + "}"
    case .array(let items):
        return "[" + items.map(compactJSON).joined(separator: ",") + "]"
    default:
        return JSONWriter.scalar(value) ?? "null"
    }
}
