/// A filter is a GLSL function over one RGBA colour plus typed parameters; the chain fuses
/// consecutive filters into one fragment shader (Movit's approach) so a preset costs one pass.
public struct FilterDeclaration: Sendable {
    public let name: String
    public let summary: String
    public let parameters: [ParameterDeclaration]
    /// GLSL declaring `vec4 {{p}}apply(vec4 c)` and its `uniform`s, each named `{{p}}<parameter>`.
    /// `{{p}}` becomes a prefix unique to the filter's position in the chain.
    public let glsl: String

    public init(name: String, summary: String, parameters: [ParameterDeclaration] = [], glsl: String) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
        self.glsl = glsl
    }

    public func parameter(named name: String) -> ParameterDeclaration? {
        parameters.first { $0.name == name }
    }
}

public enum ParameterType: Sendable, Equatable {
    case float(range: ClosedRange<Double>)
    /// 4x4 matrix given as 4 rows of 4 numbers; row i is output channel i (R, G, B, A) over inputs R, G, B, A.
    case matrix4
}

public enum ParameterValue: Sendable, Equatable, CustomStringConvertible {
    case float(Double)
    case matrix4([Double])

    public var description: String {
        switch self {
        case .float(let v): return formatNumber(v)
        case .matrix4(let m):
            let rows = (0..<4).map { r in "[" + m[(r * 4)..<(r * 4 + 4)].map(formatNumber).joined(separator: ", ") + "]" }
            return "[" + rows.joined(separator: ", ") + "]"
        }
    }
}

func formatNumber(_ v: Double) -> String {
    if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
    return String(v)
}

public struct ParameterDeclaration: Sendable {
    public let name: String
    public let type: ParameterType
    public let defaultValue: ParameterValue
    public let summary: String

    public init(_ name: String, _ type: ParameterType, default defaultValue: ParameterValue, _ summary: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.summary = summary
    }

    public static func float(_ name: String, default value: Double, range: ClosedRange<Double>, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .float(range: range), default: .float(value), summary)
    }
}

/// A filter with its parameter values resolved (defaults filled in).
public struct FilterInstance: Sendable {
    public let declaration: FilterDeclaration
    public let values: [String: ParameterValue]

    public init(_ declaration: FilterDeclaration, values: [String: ParameterValue] = [:]) {
        self.declaration = declaration
        var resolved: [String: ParameterValue] = [:]
        for p in declaration.parameters { resolved[p.name] = values[p.name] ?? p.defaultValue }
        self.values = resolved
    }
}

/// Every built-in filter, by preset name.
public enum FilterRegistry {
    public static let all: [FilterDeclaration] = [
        IdentityFilter.declaration,
        SepiaFilter.declaration,
        GrayscaleFilter.declaration,
        ColorMatrixFilter.declaration,
        BrightnessFilter.declaration,
        ContrastFilter.declaration,
        SaturationFilter.declaration,
    ]

    public static func named(_ name: String) -> FilterDeclaration? {
        all.first { $0.name == name }
    }
}
