/// Compiles a preset's custom shaders, for `gpuencode validate`: each in a small `ImageRenderer` of
/// its own, so an error is told at the shader's place in the preset with the shader's own line
/// numbers. Needs a current GL context (a `GLContext` made on this thread).
public enum PresetShaderCheck {
    public static func compileErrors(_ preset: Preset) -> [PresetDiagnostic] {
        var found: [PresetDiagnostic] = []
        for (index, definition) in preset.shaderDefinitions.sorted(by: { $0.key < $1.key }) where index < preset.filters.count {
            let f = preset.filters[index]
            do {
                _ = try ImageRenderer(width: 8, height: 8, filters: [f])
            } catch let e as GPUEncodeError {
                var message = e.message
                let marker = Array("does not compile: ")
                let chars = Array(message)
                if chars.count >= marker.count,
                   let start = (0...(chars.count - marker.count)).first(where: { Array(chars[$0..<($0 + marker.count)]) == marker }) {
                    message = "the shader does not compile: " + String(chars[(start + marker.count)...])
                }
                found.append(PresetDiagnostic(.error, file: f.context.origin ?? preset.origin, line: definition.value.line,
                                              column: definition.value.column, path: definition.path, message))
            } catch {
                found.append(PresetDiagnostic(.error, file: preset.origin, line: definition.value.line,
                                              column: definition.value.column, path: definition.path, "\(error)"))
            }
        }
        return found
    }
}
