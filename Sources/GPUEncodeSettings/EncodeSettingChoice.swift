import GPUEncodeCore

extension EncodeSetting {
    /// A setting whose value is one of an enum's words (`--hdr tonemap|keep`): the kind, the
    /// parse with its "is not one of" message and the JSON all come from the enum, so a new case
    /// is a word everywhere at once.
    static func choice<Choice: RawRepresentable & CaseIterable & Sendable>(
        _ type: Choice.Type, key: String, flags: [String], valueName: String, help: String, places: EncodeSettingPlaces,
        at path: WritableKeyPath<EncodeOverrides, Choice?> & Sendable
    ) -> EncodeSetting where Choice.RawValue == String {
        let words = Choice.allCases.map(\.rawValue)
        return EncodeSetting(
            key: key, flags: flags, valueName: valueName, help: help, kind: .word(words), places: places,
            parse: { text, _, o in
                guard let value = Choice(rawValue: text) else { return "\"\(text)\" is not one of \(words.joined(separator: ", "))" }
                o[keyPath: path] = value
                return nil
            },
            json: { $0[keyPath: path].map { .string($0.rawValue) } })
    }
}
