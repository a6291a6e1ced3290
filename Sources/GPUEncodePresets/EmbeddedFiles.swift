extension BuiltinPresetSources {
    /// A file from presets/assets, for built-in presets that name one (`assets/NAME`).
    static func file(_ path: String) -> [UInt8]? {
        guard let text = assets[path] else { return nil }
        return base64Decode(text)
    }
}

func base64Decode(_ text: String) -> [UInt8]? {
    var table = [Int16](repeating: -1, count: 256)
    for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() { table[Int(c)] = Int16(i) }
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count * 3 / 4)
    var buffer: UInt32 = 0
    var bits = 0
    for c in text.utf8 where c != UInt8(ascii: "=") {
        let v = table[Int(c)]
        guard v >= 0 else { return nil }
        buffer = (buffer << 6) | UInt32(v)
        bits += 6
        if bits >= 8 {
            bits -= 8
            out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
        }
    }
    return out
}
