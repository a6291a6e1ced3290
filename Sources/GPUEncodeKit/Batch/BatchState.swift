import Glibc

/// What a finished job leaves in the state file, so that a rerun knows whether its output is still
/// what this input, preset and gpuencode would make.
public struct JobRecord: Sendable, Equatable {
    public var input: String
    public var inputSize: Int64
    /// Nanoseconds since the epoch.
    public var inputMtime: Int64
    /// `fnv1a64:…` of the input's bytes, when the run had --hash.
    public var inputHash: String?
    public var presetDigest: String
    public var settingsDigest: String
    public var version: String
    public var finishedAt: String
}

/// `.gpuencode-state.json` (or `--state FILE`): finished jobs by output path. Written through a
/// temporary and a rename after every job, so a crash or a kill leaves the last good copy.
public final class BatchState: @unchecked Sendable {
    public static let formatVersion = 1
    public let path: String
    private let records: Locked<[String: JobRecord]>

    /// An unreadable or foreign file is an error (64) rather than silently redoing everything.
    public init(path: String) throws {
        self.path = path
        var loaded: [String: JobRecord] = [:]
        if fileExists(path) {
            let text: String
            do { text = try readTextFileSafely(path, kind: .state) } catch let e as FileReadError {
                throw GPUEncodeError(.usage, path: path, "cannot read the state file: \(e.reason)")
            }
            let json: JSONValue
            do { json = try JSONParser.parse(text) } catch let e as JSONSyntaxError {
                throw GPUEncodeError(.usage, path: path, "\(e.line):\(e.column): not a gpuencode state file (\(e.message)); delete it to start over")
            }
            guard json["format"]?.stringValue == "gpuencode-batch-state", let jobs = json["jobs"]?.objectMembers else {
                throw GPUEncodeError(.usage, path: path, "not a gpuencode state file (no \"format\": \"gpuencode-batch-state\"); delete it or pick another --state")
            }
            for m in jobs {
                let v = m.value
                guard let input = v["input"]?.stringValue, let size = v["inputSize"]?.numberValue, let mtime = v["inputMtime"]?.stringValue.flatMap({ Int64($0) }),
                      let preset = v["presetDigest"]?.stringValue, let settings = v["settingsDigest"]?.stringValue,
                      let version = v["version"]?.stringValue else { continue }
                loaded[m.key] = JobRecord(input: input, inputSize: Int64(size), inputMtime: mtime, inputHash: v["inputHash"]?.stringValue,
                                          presetDigest: preset, settingsDigest: settings, version: version,
                                          finishedAt: v["finishedAt"]?.stringValue ?? "")
            }
        }
        records = Locked(loaded)
    }

    public func record(for output: String) -> JobRecord? { records.withLock { $0[output] } }

    public func set(_ record: JobRecord?, for output: String) {
        records.withLock { $0[output] = record }
    }

    public var count: Int { records.withLock { $0.count } }

    public func save() throws {
        let snapshot = records.withLock { $0 }
        let jobs = snapshot.keys.sorted().map { key -> (String, JSONValue) in
            let r = snapshot[key]!
            return (key, .obj([
                ("input", .str(r.input)),
                ("inputSize", .int64(r.inputSize)),
                // A string: nanoseconds do not fit a double exactly.
                ("inputMtime", .str(String(r.inputMtime))),
                ("inputHash", .str(r.inputHash)),
                ("presetDigest", .str(r.presetDigest)),
                ("settingsDigest", .str(r.settingsDigest)),
                ("version", .str(r.version)),
                ("finishedAt", .str(r.finishedAt)),
            ]))
        }
        let doc = JSONValue.obj([
            ("format", .str("gpuencode-batch-state")),
            ("formatVersion", .int(BatchState.formatVersion)),
            ("jobs", .obj(jobs)),
        ])
        try writeTextAtomically(JSONWriter.write(doc), to: path)
    }
}

/// Whether a job runs, and why.
public enum JobDecision: Sendable, Equatable {
    case run(overwrite: Bool, reason: String)
    case skip(reason: String)
    case refuse(reason: String)
}

public struct ResumePolicy: Sendable {
    public var skipExisting = false
    public var force = false
    public var hash = false

    public init(skipExisting: Bool = false, force: Bool = false, hash: Bool = false) {
        self.skipExisting = skipExisting
        self.force = force
        self.hash = hash
    }

    /// An existing output is a finished job (outputs appear only when complete). It is kept when the
    /// state file says it was made from this input (size and mtime, or content hash with --hash),
    /// preset, settings and gpuencode version; redone when any of those changed; an output the state
    /// does not know is kept with --skip-existing, redone with --force, else refused.
    public func decide(_ job: BatchJob, record: JobRecord?, inputHash: () throws -> String?) rethrows -> JobDecision {
        guard fileExists(job.output) else { return .run(overwrite: false, reason: record == nil ? "new" : "output missing") }
        if force { return .run(overwrite: true, reason: "--force") }
        guard let record else {
            if skipExisting { return .skip(reason: "output exists (--skip-existing)") }
            return .refuse(reason: "already exists and the state file does not know it (use --skip-existing to keep it or --force to redo it)")
        }
        if record.version != GPUEncodeVersion.string { return .run(overwrite: true, reason: "gpuencode version changed (\(record.version) → \(GPUEncodeVersion.string))") }
        if record.input != job.input { return .run(overwrite: true, reason: "made from another input (\(record.input))") }
        if record.presetDigest != job.presetDigest { return .run(overwrite: true, reason: "preset changed") }
        if record.settingsDigest != job.settingsDigest { return .run(overwrite: true, reason: "encoder settings changed") }
        guard let stamp = FileStamp(job.input) else { return .run(overwrite: true, reason: "input missing") }
        if hash, let recorded = record.inputHash {
            if try inputHash() != recorded { return .run(overwrite: true, reason: "input changed (content hash)") }
        } else if stamp.size != record.inputSize || stamp.mtime != record.inputMtime {
            return .run(overwrite: true, reason: "input changed (size or modification time)")
        }
        return .skip(reason: "up to date")
    }
}
