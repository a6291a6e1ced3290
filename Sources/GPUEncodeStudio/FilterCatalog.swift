import GPUEncodeKit

/// The filters as the studio's page builds its controls from them: generated from the same
/// declarations as docs/filters.md and presets/schema.json, so a slider's range and default are
/// the ones the preset reader enforces.
enum FilterCatalog {
    static func json() -> JSONValue {
        .array(FilterRegistry.all.map(declaration))
    }

    static func declaration(_ d: FilterDeclaration) -> JSONValue {
        var blend = false
        if case .blend = d.kind { blend = true }
        return .object([
            ("name", .string(d.name)),
            ("category", .string(d.category.rawValue)),
            ("summary", .string(d.summary)),
            ("blend", .bool(blend)),
            ("parameters", .array(d.parameters.map { parameter($0, animatable: d.isAnimatable($0)) })),
        ])
    }

    static func parameter(_ p: ParameterDeclaration, animatable: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [("name", .string(p.name))]
        func range(_ lo: Double, _ hi: Double) { members += [("min", .number(lo)), ("max", .number(hi))] }
        switch p.type {
        case .float(let r): members.append(("type", .string("number"))); range(r.lowerBound, r.upperBound)
        case .int(let r): members.append(("type", .string("integer"))); range(Double(r.lowerBound), Double(r.upperBound))
        case .bool: members.append(("type", .string("boolean")))
        case .vector(let n, let r): members.append(("type", .string("vec\(n)"))); range(r.lowerBound, r.upperBound)
        case .color: members.append(("type", .string("colour")))
        case .matrix4: members.append(("type", .string("matrix")))
        case .choice(let words): members += [("type", .string("choice")), ("choices", .strings(words))]
        case .file(let extensions): members += [("type", .string("file")), ("extensions", .strings(extensions))]
        case .points: members.append(("type", .string("points")))
        case .text: members.append(("type", .string("text")))
        }
        members += [
            ("default", PresetWriter.value(p.defaultValue, p.type)),
            ("summary", .string(p.summary)),
            ("animatable", .bool(animatable)),
        ]
        return .object(members)
    }

    /// The extensions any file parameter accepts (pictures, LUTs, curves, shaders), for the page's file lists.
    static let fileExtensions: Set<String> = {
        var all: Set<String> = []
        for d in FilterRegistry.all {
            for p in d.parameters { if case .file(let e) = p.type { all.formUnion(e.map { $0.lowercased() }) } }
        }
        return all
    }()
}
