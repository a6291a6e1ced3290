import GPUEncodeKit

/// What the studio renders from: the input's frame at the time asked for and the preset texts the
/// page sends. Lives on the `RenderThread` (it owns the GL context through `Preview.Session`).
final class StudioSession {
    let preview: Preview.Session
    /// Where the edited preset's relative file names resolve and where it is saved: the preset
    /// file's path, or `folder/NAME.json` for a built-in or no preset.
    let origin: String
    let allowed: AllowedPaths

    init(input: String, at seconds: Double?, origin: String, allowed: AllowedPaths, gpu: GPUSelection) throws {
        preview = try Preview.Session(input: input, at: seconds, gpu: gpu)
        self.origin = origin
        self.allowed = allowed
    }

    /// A preset text the page sent that is not a valid preset: the first error, where it is.
    struct PresetProblem: Error {
        let message: String
        let line: Int?
        let column: Int?
    }

    /// Parses `text` as the preset at `origin` (its files resolved beside it, within the allowed folders).
    func preset(_ text: String) throws -> Preset {
        let check = Preset.check(json: text, origin: origin, allowed: allowed)
        if let first = check.errors.first {
            throw PresetProblem(message: first.unlocated, line: first.line > 0 ? first.line : nil, column: first.line > 0 ? first.column : nil)
        }
        guard let preset = check.preset else { throw PresetProblem(message: "invalid preset", line: nil, column: nil) }
        return preset
    }

    struct Pictures {
        /// The original (or preset B) and the preset, of the same frame.
        let a: RGBAImage
        let b: RGBAImage
        /// The frame's time, nil for a still image.
        let time: Double?
    }

    /// The last picture A, for the frame and compare text it shows: moving a slider changes only
    /// the preset, so side A is rendered again only when the frame or preset B changes.
    private var lastA: (time: Double?, compare: String?, image: RGBAImage)?

    /// The frame at `seconds` could not be had (the data is at fault, not a preset); the session
    /// still shows the frame it showed, and the next request moves afresh.
    struct FrameProblem: Error { let error: GPUEncodeError }

    /// The frame at `seconds` through no filters (or `compare`, whose text is `compareText`) and through `preset`.
    func render(preset: Preset, compare: Preset?, compareText: String?, at seconds: Double) throws -> Pictures {
        let time: Double?
        do { time = try preview.show(at: seconds) } catch let e as GPUEncodeError { throw FrameProblem(error: e) }
        let b = try preview.render(preset.filters, light: preset.light)
        if let last = lastA, last.time == time, last.compare == compareText {
            return Pictures(a: last.image, b: b, time: time)
        }
        let a = try compare.map { try preview.render($0.filters, light: $0.light) } ?? preview.render([])
        lastA = (time, compareText, a)
        return Pictures(a: a, b: b, time: time)
    }
}
