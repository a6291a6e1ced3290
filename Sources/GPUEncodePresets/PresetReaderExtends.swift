import Glibc
import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

// `extends`: reading a preset's parent and laying the child's overrides over its filters.
extension PresetReader {
    /// The preset named by `extends` (a built-in name, or a path relative to this preset). Its
    /// errors are recorded as they are (they name its file).
    func loadParent(_ ext: JSONValue) -> (preset: Preset, origin: String)? {
        guard let spec = attempt({ try string(ext, "extends") }) else { return nil }
        let parentOrigin: String
        let text: [UInt8]
        if Preset.isPath(spec) {
            var spec = Substring(spec)
            while spec.hasPrefix("./") { spec = spec.dropFirst(2) }
            let relative = String(spec)
            parentOrigin = context.resolve(relative)
            // The parent is a file the preset reads like any other: inside its folder or an allowed one.
            let checked: String
            do { checked = try context.checkedPath(relative) } catch let e as FilterError {
                errors.append(fail(ext, "extends", e.message))
                return nil
            } catch { return nil }
            do { text = try readFileSafely(checked, kind: .preset, canonical: context.baseDirectory != nil) } catch let e as FileReadError {
                errors.append(fail(ext, "extends", "cannot read \(parentOrigin): \(e.reason)"))
                return nil
            } catch { return nil }
        } else {
            guard let json = Preset.builtinSource(spec) else {
                errors.append(fail(ext, "extends", "no built-in preset \"\(spec)\"\(hint(spec, Preset.builtinNames)); give a built-in name or a path to a .json file (relative to this preset)"))
                return nil
            }
            parentOrigin = "builtin:\(spec)"
            text = Array(json.utf8)
        }
        let chain = extendsChain + [origin]
        guard chain.count <= Self.maxExtendsDepth else {
            errors.append(fail(ext, "extends", "presets extend each other more than \(Self.maxExtendsDepth) levels deep"))
            return nil
        }
        if let i = chain.firstIndex(where: { sameFile($0, parentOrigin) }) {
            errors.append(fail(ext, "extends", "extends cycle: \((chain[i...] + [parentOrigin]).joined(separator: " -> "))"))
            return nil
        }
        let reader = PresetReader(origin: parentOrigin, extendsChain: chain, allowed: allowed)
        let preset = reader.read(bytes: text)
        errors.append(contentsOf: reader.errors)
        guard reader.errors.isEmpty, let preset else { return nil }
        return (preset, parentOrigin)
    }

    func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        if a.hasPrefix("builtin:") || b.hasPrefix("builtin:") { return false }
        guard let x = fileIdentity(a), let y = fileIdentity(b) else { return false }
        return x == y
    }

    /// `"parameters": {"<id or index>": {"param": value, ...}}`: new values for the inherited filters.
    func applyOverrides(_ overrides: JSONValue, to filters: inout [FilterInstance], parentOrigin: String) {
        guard let list = attempt({ try members(overrides, "parameters") }) else { return }
        let ids = filters.compactMap(\.id)
        // Looked up per override: a scan of the filters for each was quadratic.
        var indexOfId: [String: Int] = [:]
        for (i, f) in filters.enumerated() { if let id = f.id, indexOfId[id] == nil { indexOfId[id] = i } }
        for (key, obj) in list {
            let path = "parameters.\(key)"
            let index = Int(key).flatMap { $0 >= 0 && $0 < filters.count ? $0 : nil } ?? indexOfId[key]
            guard let index else {
                let names = ids.isEmpty ? "" : " or an id (\(listed(ids)))"
                errors.append(fail(obj, path, "\(parentOrigin) has no filter \"\(key)\"\(hint(key, ids)); use a position 0...\(filters.count - 1)\(names)"))
                continue
            }
            let f = filters[index]
            let d = f.declaration
            guard d.name != NodeInputFilter.name else {
                errors.append(fail(obj, path, "step \(index) of \(parentOrigin) is a {\"node\": ...} step, not a filter"))
                continue
            }
            guard let m = attempt({ try members(obj, path) }) else { continue }
            var values = f.values
            var overlay = f.overlay.first
            var ctx = f.context
            var failed = false
            var isBlend = false
            if case .blend = d.kind { isBlend = true }
            for (name, v) in m {
                let p = "\(path).\(name)"
                if name == "with" && isBlend {
                    if let o = attempt({ try secondInput(v, p) }) { overlay = o } else { failed = true }
                    continue
                }
                guard let decl = d.parameter(named: name) else {
                    let names = d.parameters.map(\.name) + (isBlend ? ["with"] : [])
                    errors.append(fail(v, p, "unknown parameter for \(d.name)\(hint(name, names)); its parameters are \(names.joined(separator: ", "))"))
                    failed = true
                    continue
                }
                let value = attempt { () throws -> ParameterValue in
                    if case .object = v.kind, v["keyframes"] != nil { return try keyframes(v, decl, d, p) }
                    return try parameter(v, decl, p)
                }
                guard let value else { failed = true; continue }
                values[name] = value
                if case .file = decl.type { ctx = context }
            }
            guard !failed else { continue }
            var g = FilterInstance(d, values: values, overlay: overlay, context: ctx)
            g.id = f.id
            if let problem = d.check?(g) { errors.append(fail(obj, path, "\(d.name): \(problem)")); continue }
            guard let prepared = attempt({ () throws -> FilterInstance in
                do { return try g.prepared() } catch let e as FilterError { throw fail(obj, path, "\(d.name): \(e.message)") }
            }) else { continue }
            filters[index] = prepared
        }
    }
}
