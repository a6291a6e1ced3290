import Glibc
import GPUEncodeKit

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
///
/// Several batches may share one state file (shards of one plan, two people, two CI jobs): every
/// save re-reads the file under an exclusive lock and writes the records on disk merged with the
/// ones this run set, so no batch loses another's records. Jobs are keyed by the canonical output
/// path (the real path of its folder + the file name): `--out-dir out` and `--out-dir ./out` or a
/// symlinked spelling of the same folder are the same job.
///
/// A state file that is not one of ours, has an unknown `formatVersion` or a malformed entry is an
/// error (exit 66, like any input that cannot be used) rather than silently redoing or skipping work.
public final class BatchState: @unchecked Sendable {
    public static let formatVersion = 1
    public let path: String
    private let records: Locked<[String: JobRecord]>
    /// What this run set or removed, by key: what a save lays over the records on disk.
    private let changes = Locked<[String: JobRecord?]>([:])

    public init(path: String) throws {
        self.path = path
        records = Locked(try BatchState.load(path))
    }

    /// The records in the file at `path` (none when it does not exist), keyed canonically.
    static func load(_ path: String) throws -> [String: JobRecord] {
        guard fileExists(path) else { return [:] }
        let text: String
        do { text = try readTextFileSafely(path, kind: .state) } catch let e as FileReadError {
            throw GPUEncodeError(.input, path: path, "cannot read the state file: \(e.reason)")
        }
        let json: JSONValue
        do { json = try JSONParser.parse(text) } catch let e as JSONSyntaxError {
            throw GPUEncodeError(.input, path: path, "\(e.line):\(e.column): not a gpuencode state file (\(e.message)); delete it to start over")
        }
        guard json["format"]?.stringValue == "gpuencode-batch-state", let jobs = json["jobs"]?.objectMembers else {
            throw GPUEncodeError(.input, path: path, "not a gpuencode state file (no \"format\": \"gpuencode-batch-state\"); delete it or pick another --state")
        }
        guard let version = json["formatVersion"]?.numberValue, version == Double(formatVersion) else {
            let found = json["formatVersion"].map { v -> String in
                guard let n = v.numberValue else { return "(not a number)" }
                return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
            } ?? "(missing)"
            throw GPUEncodeError(.input, path: path, "state file formatVersion \(found) is not \(formatVersion), the one this gpuencode \(GPUEncodeVersion.string) reads; use the gpuencode that wrote it, or delete the file to start over")
        }
        var loaded: [String: JobRecord] = [:]
        for m in jobs {
            let v = m.value
            guard let input = v["input"]?.stringValue, let size = v["inputSize"]?.numberValue, size >= 0, size < 9.0e18, size == size.rounded(),
                  let mtime = v["inputMtime"]?.stringValue.flatMap({ Int64($0) }),
                  let preset = v["presetDigest"]?.stringValue, let settings = v["settingsDigest"]?.stringValue,
                  let version = v["version"]?.stringValue, !m.key.isEmpty else {
                throw GPUEncodeError(.input, path: path, "malformed entry \"\(m.key)\" in the state file (each job needs input, inputSize, inputMtime, presetDigest, settingsDigest and version); delete the file to start over")
            }
            loaded[key(for: m.key)] = JobRecord(input: input, inputSize: Int64(size), inputMtime: mtime, inputHash: v["inputHash"]?.stringValue,
                                                presetDigest: preset, settingsDigest: settings, version: version,
                                                finishedAt: v["finishedAt"]?.stringValue ?? "")
        }
        return loaded
    }

    /// The canonical path of an output: its folder's real path (symlinks, `.` and `..` resolved;
    /// the nearest existing ancestor when the folder is not made yet) and the file name.
    public static func key(for output: String) -> String {
        canonicalOutputPath(output)
    }

    public func record(for output: String) -> JobRecord? {
        let key = BatchState.key(for: output)
        return records.withLock { $0[key] }
    }

    public func set(_ record: JobRecord?, for output: String) {
        let key = BatchState.key(for: output)
        records.withLock { $0[key] = record }
        changes.withLock { $0[key] = .some(record) }
    }

    public var count: Int { records.withLock { $0.count } }

    /// Read-modify-write under an exclusive flock (`STATE.lock`): the records on disk (another
    /// batch's included) with this run's changes laid over them.
    public func save() throws {
        try makeDirectories(splitPath(path).dir)
        try withFileLock(for: path) {
            var merged = try BatchState.load(path)
            for (key, record) in changes.withLock({ $0 }) { merged[key] = record }
            records.withLock { $0 = merged }
            try write(merged)
        }
    }

    private func write(_ snapshot: [String: JobRecord]) throws {
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
