import Glibc
import GPUEncodeCore

/// A parsed `.cube` file in either dialect (docs/luts.md):
/// - Adobe/Iridas: `LUT_1D_SIZE` or `LUT_3D_SIZE`, with optional `DOMAIN_MIN` / `DOMAIN_MAX`
///   (three numbers each, per channel);
/// - Resolve: `LUT_1D_SIZE` and/or `LUT_3D_SIZE` with optional `LUT_1D_INPUT_RANGE` /
///   `LUT_3D_INPUT_RANGE` (two numbers, all channels); with both sizes the 1D table (a shaper)
///   comes first and feeds the 3D one.
/// An input x is mapped to (x - min) / (max - min), clamped to 0...1, then scaled to the table's
/// index space 0...size-1.
public struct CubeFile: Sendable {
    public var title: String? = nil
    /// Entries of the 1D table (0: none) and the edge of the 3D table (0: none).
    public var size1D = 0
    public var size3D = 0
    public var min1D: [Double] = [0, 0, 0]
    public var max1D: [Double] = [1, 1, 1]
    public var min3D: [Double] = [0, 0, 0]
    public var max3D: [Double] = [1, 1, 1]
    /// RGBA (alpha 1), `size1D` entries.
    public var table1D: [Float] = []
    /// RGBA (alpha 1), size3D³ entries, red fastest (the file's order).
    public var table3D: [Float] = []

    public static let maxSize1D = 65536
    public static let maxSize3D = 256

    public init() {}

    /// The longest line read (a TITLE, a comment); a table row needs a few dozen bytes.
    public static let maxLineLength = 64 << 10

    /// Parses a file's bytes; errors name the line.
    public static func parse(_ bytes: [UInt8]) throws -> CubeFile {
        var parser = Parser()
        // strtod reads up to a character that can't continue the number: a terminator after the
        // last one keeps it inside the buffer.
        let terminated = bytes + [0]
        try terminated.withUnsafeBufferPointer {
            _ = try parser.lines(UnsafeBufferPointer(rebasing: $0[0..<bytes.count]), final: true)
        }
        try parser.finish()
        return parser.cube
    }

    /// Parses a file as it is read, a chunk at a time, so that a bad header (a size over the
    /// limits, more rows than the file can hold) fails before the body is read and memory is the
    /// table's, not the file's.
    static func parse(_ file: SafeFile) throws -> CubeFile {
        var parser = Parser()
        parser.available = file.size
        let chunk = 1 << 20
        // Room for a partial line carried over, a chunk, and a terminator (see parse(_ bytes:)).
        var buffer = [UInt8](repeating: 0, count: maxLineLength + chunk + 1)
        var filled = 0
        var atEnd = false
        while !atEnd {
            let n = try buffer.withUnsafeMutableBytes { raw in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[filled..<(filled + chunk)]))
            }
            atEnd = n == 0
            filled += n
            buffer[filled] = 0
            let used = try buffer.withUnsafeBufferPointer {
                try parser.lines(UnsafeBufferPointer(rebasing: $0[0..<filled]), final: atEnd)
            }
            let left = filled - used
            guard left <= maxLineLength else {
                throw parser.fail("a line longer than \(maxLineLength >> 10) KiB (is this a .cube file?)", at: parser.line + 1)
            }
            if left > 0 && used > 0 {
                buffer.withUnsafeMutableBufferPointer { b in b.baseAddress!.update(from: b.baseAddress! + used, count: left) }
            }
            filled = left
        }
        try parser.finish()
        return parser.cube
    }

    private struct Parser {
        var cube = CubeFile()
        var line = 0
        var rows = 0
        var expected = 0
        /// The file's size when known, to refuse a table it cannot hold before allocating it.
        var available: Int? = nil
        /// Where each keyword was seen, for errors about combinations.
        var seen: [String: Int] = [:]

        func fail(_ message: String, at: Int? = nil) -> FilterError {
            FilterError("line \(at ?? line): \(message)")
        }

        /// Handles the complete lines of `bytes` (every line when `final`) and returns how many
        /// bytes they took; the rest is a partial line to come again with more after it.
        mutating func lines(_ bytes: UnsafeBufferPointer<UInt8>, final: Bool) throws -> Int {
            var start = 0
            let n = bytes.count
            while start < n {
                var end = start
                while end < n && bytes[end] != 10 { end += 1 }
                if end == n && !final { return start }
                line += 1
                var e = end
                if e > start && bytes[e - 1] == 13 { e -= 1 }
                try handle(bytes, start, e)
                start = end + 1
            }
            return n
        }

        static func isSpace(_ b: UInt8) -> Bool { b == 32 || b == 9 || b == 13 || b == 11 || b == 12 }

        /// Splits [start, end) into whitespace-separated tokens.
        static func tokens(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> [Range<Int>] {
            var out: [Range<Int>] = []
            var i = start
            while i < end {
                while i < end && isSpace(bytes[i]) { i += 1 }
                if i >= end { break }
                let s = i
                while i < end && !isSpace(bytes[i]) { i += 1 }
                out.append(s..<i)
            }
            return out
        }

        static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: bytes[r]), as: UTF8.self)
        }

        /// The token at `r`, which the caller's buffer terminates (see parse).
        func number(_ bytes: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) throws -> Double {
            let first = bytes[r.lowerBound]
            // strtod also reads hex, "inf" and "nan"; a .cube file has plain decimals.
            var ok = (first >= 48 && first <= 57) || first == 45 || first == 43 || first == 46
            for k in r where bytes[k] == 0x78 || bytes[k] == 0x58 { ok = false }
            let start = UnsafeRawPointer(bytes.baseAddress! + r.lowerBound).assumingMemoryBound(to: CChar.self)
            var endPointer: UnsafeMutablePointer<CChar>? = nil
            let value = strtod(start, &endPointer)
            ok = ok && endPointer.map { UnsafePointer($0) } == start + r.count && value.isFinite
            guard ok else { throw fail("\"\(Parser.text(bytes, r))\" is not a number") }
            return value
        }

        mutating func handle(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) throws {
            var s = start
            while s < end && Parser.isSpace(bytes[s]) { s += 1 }
            if s >= end || bytes[s] == 35 { return } // blank or "# comment"
            // Keywords are upper case (TITLE, LUT_3D_SIZE, ...); anything else is a table row.
            var e = s
            while e < end && !Parser.isSpace(bytes[e]) && ((bytes[e] >= 65 && bytes[e] <= 90) || bytes[e] == 95 || (e > s && bytes[e] >= 48 && bytes[e] <= 57)) { e += 1 }
            if e > s && (e == end || Parser.isSpace(bytes[e])) { return try keyword(bytes, s, end) }
            try row(bytes, s, end)
        }

        mutating func row(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) throws {
            if rows == 0 {
                guard cube.size1D > 0 || cube.size3D > 0 else {
                    throw fail("table data before LUT_3D_SIZE or LUT_1D_SIZE (the size must come first)")
                }
                try checkCombinations()
                expected = cube.size1D + cube.size3D * cube.size3D * cube.size3D
                // The shortest row is "0 0 0" and a newline: a file too small for the table is
                // refused before memory is set aside for it.
                if let available, expected * 6 - 1 > available {
                    throw fail("\(sizeDescription) is \(expected) table rows, more than a file of \(available) bytes can hold")
                }
                cube.table1D.reserveCapacity(cube.size1D * 4)
                cube.table3D.reserveCapacity(cube.size3D * cube.size3D * cube.size3D * 4)
            }
            // Everything after a "#" on a data line is a comment.
            var e = start
            while e < end && bytes[e] != 35 { e += 1 }
            // Three tokens without an array per row: a 256³ table has 16.7 million rows.
            var t = (0..<0, 0..<0, 0..<0)
            var count = 0
            var i = start
            while i < e {
                while i < e && Parser.isSpace(bytes[i]) { i += 1 }
                if i >= e { break }
                let s = i
                while i < e && !Parser.isSpace(bytes[i]) { i += 1 }
                switch count { case 0: t.0 = s..<i; case 1: t.1 = s..<i; case 2: t.2 = s..<i; default: break }
                count += 1
            }
            guard count == 3 else {
                throw fail("expected 3 numbers (R G B), found \(count) value\(count == 1 ? "" : "s")")
            }
            guard rows < expected else {
                throw fail("more than \(expected) table rows (\(sizeDescription))")
            }
            let r = Float(try number(bytes, t.0))
            let g = Float(try number(bytes, t.1))
            let b = Float(try number(bytes, t.2))
            if rows < cube.size1D {
                cube.table1D.append(r); cube.table1D.append(g); cube.table1D.append(b); cube.table1D.append(1)
            } else {
                cube.table3D.append(r); cube.table3D.append(g); cube.table3D.append(b); cube.table3D.append(1)
            }
            rows += 1
        }

        /// How the row count follows from the sizes, e.g. "LUT_1D_SIZE 11 + LUT_3D_SIZE 6: 11 + 6³".
        var sizeDescription: String {
            var names: [String] = [], counts: [String] = []
            if cube.size1D > 0 { names.append("LUT_1D_SIZE \(cube.size1D)"); counts.append("\(cube.size1D)") }
            if cube.size3D > 0 { names.append("LUT_3D_SIZE \(cube.size3D)"); counts.append("\(cube.size3D)³") }
            return names.joined(separator: " + ") + ": " + counts.joined(separator: " + ")
        }

        mutating func keyword(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) throws {
            let t = Parser.tokens(bytes, start, end)
            let name = Parser.text(bytes, t[0])
            let known = ["TITLE", "LUT_1D_SIZE", "LUT_3D_SIZE", "DOMAIN_MIN", "DOMAIN_MAX", "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE"]
            if rows > 0 {
                if known.contains(name) { throw fail("\(name) after the table data (keywords must come before it)") }
                throw fail("\"\(Parser.text(bytes, t[0]))\" is not a number")
            }
            guard known.contains(name) else { return } // other keywords are ignored (docs/luts.md)
            if let previous = seen[name] { throw fail("\(name) given twice (first on line \(previous))") }
            seen[name] = line
            func numbers(_ count: Int) throws -> [Double] {
                guard t.count == count + 1 else {
                    throw fail("\(name) takes \(count) number\(count == 1 ? "" : "s"), found \(t.count - 1)")
                }
                return try t[1...].map { try number(bytes, $0) }
            }
            func size(_ limit: Int) throws -> Int {
                let v = try numbers(1)[0]
                guard v == v.rounded(), v >= 2, v <= Double(limit) else {
                    throw fail("\(name) must be a whole number from 2 to \(limit), found \(Parser.text(bytes, t[1]))")
                }
                return Int(v)
            }
            switch name {
            case "TITLE":
                var s = t.count > 1 ? t[1].lowerBound : end
                var e = end
                while e > s && Parser.isSpace(bytes[e - 1]) { e -= 1 }
                if e - s >= 2 && bytes[s] == 34 && bytes[e - 1] == 34 { s += 1; e -= 1 }
                cube.title = Parser.text(bytes, s..<e)
            case "LUT_1D_SIZE": cube.size1D = try size(CubeFile.maxSize1D)
            case "LUT_3D_SIZE": cube.size3D = try size(CubeFile.maxSize3D)
            case "DOMAIN_MIN": cube.min1D = try numbers(3); cube.min3D = cube.min1D
            case "DOMAIN_MAX": cube.max1D = try numbers(3); cube.max3D = cube.max1D
            case "LUT_1D_INPUT_RANGE": let v = try numbers(2); cube.min1D = [v[0], v[0], v[0]]; cube.max1D = [v[1], v[1], v[1]]
            case "LUT_3D_INPUT_RANGE": let v = try numbers(2); cube.min3D = [v[0], v[0], v[0]]; cube.max3D = [v[1], v[1], v[1]]
            default: break
            }
        }

        /// Dialects don't mix: DOMAIN_* is Adobe's (one table), *_INPUT_RANGE is Resolve's.
        func checkCombinations() throws {
            let domain = ["DOMAIN_MIN", "DOMAIN_MAX"].compactMap { seen[$0] }
            let ranges = ["LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE"].compactMap { seen[$0] }
            if let d = domain.max(), let r = ranges.max() {
                throw fail("DOMAIN_MIN/DOMAIN_MAX (Adobe) and LUT_1D_INPUT_RANGE/LUT_3D_INPUT_RANGE (Resolve) in one file", at: max(d, r))
            }
            if let d = domain.max(), cube.size1D > 0 && cube.size3D > 0 {
                throw fail("DOMAIN_MIN/DOMAIN_MAX with both a 1D and a 3D table is ambiguous; use LUT_1D_INPUT_RANGE and LUT_3D_INPUT_RANGE", at: d)
            }
            if let at = seen["LUT_1D_INPUT_RANGE"], cube.size1D == 0 { throw fail("LUT_1D_INPUT_RANGE without LUT_1D_SIZE", at: at) }
            if let at = seen["LUT_3D_INPUT_RANGE"], cube.size3D == 0 { throw fail("LUT_3D_INPUT_RANGE without LUT_3D_SIZE", at: at) }
            for (name, lo, hi) in [("DOMAIN_MIN/DOMAIN_MAX", cube.min1D, cube.max1D), ("LUT_1D_INPUT_RANGE", cube.min1D, cube.max1D),
                                   ("LUT_3D_INPUT_RANGE", cube.min3D, cube.max3D)] {
                let at = name.hasPrefix("DOMAIN") ? domain.max() : seen[name]
                if let at, (0..<3).contains(where: { lo[$0] >= hi[$0] }) {
                    throw fail("\(name): the minimum must be below the maximum in every channel", at: at)
                }
            }
        }

        mutating func finish() throws {
            if rows == 0 {
                guard cube.size1D > 0 || cube.size3D > 0 else { throw fail("no LUT_3D_SIZE or LUT_1D_SIZE in the file") }
                try checkCombinations()
                expected = cube.size1D + cube.size3D * cube.size3D * cube.size3D
            }
            guard rows == expected else {
                throw fail("the file ends after \(rows) of \(expected) table rows (\(sizeDescription))")
            }
        }
    }
}
