/// What a transcode will do (`--dry-run`) or did, as one JSON document (`--json`; docs/json.md
/// documents every member, version 1). The job fills it as it opens the input and maps the
/// streams, the GPU stage when it makes its context and compiles the chain, `Transcoder` with the
/// result; the caller adds what it knew before (the paths, the settings it was given) and writes
/// `document`. Parts never reached (a run that failed early) are null.
public final class TranscodeReport: @unchecked Sendable {
    /// The document's format: bumped when a member changes meaning or goes away (new members may
    /// appear within a version).
    public static let version = 1

    private struct State {
        var inputPath: String?
        var outputPath: String?
        var input: JSONValue?
        var outputContainer: String?
        var streams: [(order: Int, value: JSONValue)] = []
        var settings: EncoderSettings?
        var givenSettings = EncodeOverrides()
        var preset: Preset?
        var gpu: JSONValue?
        var gpuUsed: Bool?
        var warnings: [String] = []
        var result: JSONValue?
    }

    private let state = Locked(State())
    public let dryRun: Bool

    public init(input: String?, output: String?, dryRun: Bool) {
        self.dryRun = dryRun
        state.withLock {
            $0.inputPath = input
            $0.outputPath = output
        }
    }

    /// The settings as given (command line over the preset's "encode"): every setting of
    /// `EncodeSetting.all` the run's resolved settings do not carry appears as given.
    public func given(_ settings: EncodeOverrides) { state.withLock { $0.givenSettings = settings } }

    public func warning(_ message: String) { state.withLock { $0.warnings.append(message) } }

    /// The run's settings and preset (the job calls it again when it changes the codec for kept HDR).
    public func describe(_ options: TranscodeOptions) {
        state.withLock {
            $0.settings = options.encoder
            $0.preset = options.preset
        }
    }

    func input(_ value: JSONValue) { state.withLock { $0.input = value } }

    func output(container: String) { state.withLock { $0.outputContainer = container } }

    /// An output stream (in the output's order: `index`), or a dropped input stream (index nil:
    /// after the written ones, in input order).
    func stream(_ value: JSONValue, index: Int?, input: Int) {
        state.withLock { $0.streams.append((index ?? 1_000_000 + input, value)) }
    }

    func gpu(_ value: JSONValue?) {
        state.withLock {
            $0.gpu = value
            $0.gpuUsed = value != nil
        }
    }

    func result(_ value: JSONValue) { state.withLock { $0.result = value } }

    /// The whole document. `status`: "planned" (a dry run that found nothing wrong), "done" or
    /// "failed"; `error` the failure's one line and `exitCode` the process's exit status.
    public func document(status: String, exitCode: Int32, error: String?) -> JSONValue {
        state.withLock { s in
            var m: [(String, JSONValue)] = [("version", .number(TranscodeReport.version)), ("dryRun", .bool(dryRun)),
                                            ("status", .string(status)), ("exitCode", .number(Int(exitCode))),
                                            ("error", error.map { .string($0) } ?? .null)]
            // Before the input is opened only the paths are known; before parsing, nothing.
            m.append(("input", s.input ?? s.inputPath.map { .object([("path", .string($0))]) } ?? .null))
            let streams = s.streams.sorted { $0.order < $1.order }.map(\.value)
            m.append(("output", s.outputPath.map {
                .object([("path", .string($0)), ("container", s.outputContainer.map { .string($0) } ?? .null),
                         ("streams", s.input == nil ? .null : .array(streams))])
            } ?? .null))
            m.append(("settings", s.settings.map { EncodeSetting.resolvedJSON($0, given: s.givenSettings) } ?? .null))
            if let preset = s.preset {
                m.append(("preset", .object([("name", .string(preset.name)), ("origin", .string(preset.origin)),
                                             ("light", .string(preset.light.rawValue))])))
                m.append(("filters", PresetWriter.json(preset)["filters"] ?? .array([])))
            } else {
                m.append(("preset", .null))
                m.append(("filters", .null))
            }
            m.append(("gpu", s.gpu ?? .null))
            m.append(("warnings", .strings(s.warnings)))
            m.append(("result", s.result ?? .null))
            return .object(m)
        }
    }
}
