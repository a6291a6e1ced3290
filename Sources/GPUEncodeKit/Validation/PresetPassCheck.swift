/// Plans a preset's passes against a GPU's limits, for `gpuencode validate`: the same plan the run
/// makes (`FrameRenderer.passPlan`), so a preset that validates on a GPU runs on it, and one that
/// cannot run (a single filter larger than any shader the GPU can link, or too many passes) is
/// refused by both with the same message.
public enum PresetPassCheck {
    public static func check(_ preset: Preset, limits: GPULimits) -> (passes: [String], errors: [PresetDiagnostic]) {
        do {
            return (try FrameRenderer.passPlan(preset.filters, limits: limits), [])
        } catch let e as GPUEncodeError {
            return ([], [PresetDiagnostic(.error, file: e.path ?? preset.origin, line: 0, column: 0, path: "", e.message)])
        } catch {
            return ([], [PresetDiagnostic(.error, file: preset.origin, line: 0, column: 0, path: "", "\(error)")])
        }
    }

    /// The render graph after each compiler pass, on a nominal 1080p source (`validate --passes`).
    public static func trace(_ preset: Preset, limits: GPULimits) -> [String] {
        (try? FrameRenderer.passTrace(preset.filters, limits: limits)) ?? []
    }
}
