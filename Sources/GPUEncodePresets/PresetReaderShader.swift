import Glibc
import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

// A custom shader's declaration in a preset: its parameters, its source and the bounds it must keep.
extension PresetReader {
    /// A custom shader's declaration: its source (inline or a file) and the parameters it declares.
    func shader(_ value: JSONValue, _ path: String) throws -> FilterDeclaration {
        var source: String
        var sourceName: String
        if let s = value["source"] {
            source = try string(s, path + ".source")
            sourceName = "(inline)"
            if value["file"] != nil { throw fail(value, path, "shader: give \"source\" or \"file\", not both") }
        } else if let f = value["file"] {
            let file = try string(f, path + ".file")
            do { source = String(decoding: try context.readFile(file, kind: .shader), as: UTF8.self) } catch let e as FilterError {
                throw fail(f, path + ".file", e.message)
            }
            sourceName = file
        } else {
            throw fail(value, path, "shader: missing \"source\" (the GLSL) or \"file\" (a .frag file beside the preset)")
        }
        guard source.contains("main") else { throw fail(value, path, "shader: the source has no main()") }
        if let (line, problem) = ShaderFilter.builtinProblem(in: source) ?? ShaderBounds.problem(in: source) {
            throw fail(value["source"] ?? value["file"] ?? value, path, "shader: \(sourceName) line \(line): \(problem)")
        }
        var parameters: [ParameterDeclaration] = []
        if let declared = value["parameters"] {
            for (name, spec) in try members(declared, path + ".parameters") {
                let p = "\(path).parameters.\(name)"
                guard name.first.map({ $0.isLetter }) == true, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                    throw fail(spec, p, "a parameter name must be a GLSL identifier")
                }
                guard !Self.reservedShaderParameters.contains(name) else {
                    throw fail(spec, p, "\"\(name)\" is reserved")
                }
                let typeName = try spec["type"].map { try string($0, p + ".type") } ?? "float"
                guard ShaderFilter.parameterTypes.contains(typeName) else {
                    throw fail(spec, p + ".type", "unknown type \"\(typeName)\"; use one of \(ShaderFilter.parameterTypes.joined(separator: ", "))")
                }
                var lo = -1e6, hi = 1e6
                if let r = spec["range"] {
                    guard case .array(let bounds) = r.kind, bounds.count == 2 else { throw fail(r, p + ".range", "expected [min, max]") }
                    lo = try number(bounds[0], p + ".range[0]")
                    hi = try number(bounds[1], p + ".range[1]")
                    guard lo <= hi else { throw fail(r, p + ".range", "min is above max") }
                }
                // The shader gets a 32-bit int or float: a bound beyond those (a range of ±1e300
                // made Int() trap) means nothing to it.
                let limit = typeName == "int" ? Double(Int32.max) : Self.maxShaderFloat
                guard lo >= -limit, hi <= limit else {
                    throw fail(spec["range"] ?? spec, p + ".range", "the range of a \(typeName) parameter must lie within ±\(formatNumber(limit))")
                }
                let type: ParameterType
                switch typeName {
                case "int":
                    let (l, h) = (lo.rounded(.up), hi.rounded(.down))
                    guard l <= h, let low = Int(wholeNumber: l), let high = Int(wholeNumber: h) else {
                        throw fail(spec["range"] ?? spec, p + ".range", "the range holds no whole number")
                    }
                    type = .int(range: low...high)
                case "bool": type = .bool
                case "vec2": type = .vector(count: 2, range: lo...hi)
                case "vec3": type = .vector(count: 3, range: lo...hi)
                case "vec4": type = .vector(count: 4, range: lo...hi)
                case "color": type = .color
                default: type = .float(range: lo...hi)
                }
                let summary = try spec["description"].map { try string($0, p + ".description") } ?? ""
                let fallback: ParameterValue
                switch type {
                case .bool: fallback = .bool(false)
                case .int: fallback = .int(0)
                case .vector(let n, _): fallback = .vector([Double](repeating: 0, count: n))
                case .color: fallback = .vector([0, 0, 0, 1])
                default: fallback = .float(0)
                }
                let placeholder = ParameterDeclaration(name, type, default: fallback, summary)
                let defaultValue = try spec["default"].map { try parameter($0, placeholder, p + ".default") } ?? fallback
                if let extra = try members(spec, p).first(where: { !["type", "default", "range", "description"].contains($0.key) }) {
                    throw fail(extra.value, "\(p).\(extra.key)", "unknown member; a shader parameter has type, default, range, description")
                }
                parameters.append(ParameterDeclaration(name, type, default: defaultValue, summary))
            }
        }
        return ShaderFilter.make(source: source, sourceName: sourceName, parameters: parameters)
    }
}
