import Glibc
import GPUEncodeKit

public enum JobStatus: String, Sendable {
    case ok, failed, skipped
}

/// How one job ended: what the report and the JUnit file say about it.
public struct JobResult: Sendable {
    public let job: BatchJob
    public var status: JobStatus
    /// Why it was skipped or redone (`up to date`, `preset changed`, `--force`, `new`).
    public var reason: String?
    public var error: String?
    /// The code the single-file command would exit with (0 when ok or skipped).
    public var exitCode: Int32 = 0
    public var inputFacts: MediaFacts?
    public var outputFacts: MediaFacts?
    public var framesOut: Int?
    public var wallSeconds: Double = 0
    public var renderer: String?
    /// The worker (1 ... --jobs) that ran it.
    public var worker: Int?
    /// The job's warnings, one line each (as printed).
    public var warnings: [String] = []

    public init(job: BatchJob, status: JobStatus, reason: String? = nil) {
        self.job = job
        self.status = status
        self.reason = reason
    }

    public var fps: Double? {
        guard let f = framesOut, wallSeconds > 0 else { return nil }
        return Double(f) / wallSeconds
    }

    /// One entry of the report's `jobs` (docs/report.md).
    public var json: JSONValue {
        .obj([
            ("id", .str(job.output)),
            ("index", .int(job.index)),
            ("input", .str(job.input)),
            ("output", .str(job.output)),
            ("preset", .obj([("name", .str(job.preset.name)), ("spec", .str(job.presetSpec)), ("digest", .str(job.presetDigest))]
                            + (job.filterSpec.map { [("filter", .str($0))] } ?? []))),
            ("status", .str(status.rawValue)),
            ("reason", .str(reason)),
            ("error", .str(error)),
            ("exitCode", .int(Int(exitCode))),
            ("inputDuration", .num(inputFacts?.duration)),
            ("outputDuration", .num(outputFacts?.duration)),
            ("framesIn", .int(inputFacts?.frames)),
            ("framesOut", .int(framesOut)),
            ("avOffsetIn", .num(inputFacts?.avOffset)),
            ("avOffsetOut", .num(outputFacts?.avOffset)),
            ("wallSeconds", .num(status == .skipped ? nil : rounded(wallSeconds, 3))),
            ("fps", .num(fps.map { rounded($0, 2) })),
            ("outputBytes", .int64(outputFacts?.bytes)),
            ("outputBitrate", .num(outputFacts?.bitrate.map { $0.rounded() })),
            ("renderer", .str(renderer)),
            ("worker", .int(worker)),
            ("warnings", .arr(warnings.map { .str($0) })),
        ])
    }
}

func rounded(_ v: Double, _ decimals: Int) -> Double {
    var p = 1.0
    for _ in 0..<decimals { p *= 10 }
    return (v * p).rounded() / p
}

/// The `--report` JSON (schema `gpuencode-batch-report`, version 1; docs/report.md) and the JUnit XML,
/// both built from the job entries so that `report merge` writes them the same way.
public enum BatchReport {
    public static let schema = "gpuencode-batch-report"
    public static let version = 1

    public static func document(jobs: [JSONValue], planJobs: Int, planDigest: String, shard: Shard?, interrupted: Int32?,
                                failFastStopped: Bool, wallSeconds: Double?, mergedFrom: [String]? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("schema", .str(schema)),
            ("version", .int(version)),
            ("gpuencodeVersion", .str(GPUEncodeVersion.string)),
            ("createdAt", .str(isoTimestamp())),
            ("plan", .obj([("jobs", .int(planJobs)), ("digest", .str(planDigest))])),
            ("shard", shard.map { .obj([("index", .int($0.index)), ("count", .int($0.count))]) } ?? JSONValue(.null)),
        ]
        if let mergedFrom { members.append(("mergedFrom", .arr(mergedFrom.map { .str($0) }))) }
        members.append(("interrupted", interrupted.map { .obj([("signal", .int(Int($0)))]) } ?? JSONValue(.null)))
        members.append(("failFastStopped", .bool(failFastStopped)))
        members.append(("jobs", .arr(jobs)))
        members.append(("totals", totals(jobs, wallSeconds: wallSeconds)))
        return .obj(members)
    }

    static func totals(_ jobs: [JSONValue], wallSeconds: Double?) -> JSONValue {
        var counts = [JobStatus.ok: 0, .failed: 0, .skipped: 0]
        var frames = 0
        var bytes = 0.0
        var jobSeconds = 0.0
        var warnings = 0
        for j in jobs {
            if let list = j["warnings"], let items = list.arrayValue { warnings += items.count }
            if let s = j["status"]?.stringValue.flatMap(JobStatus.init(rawValue:)) { counts[s, default: 0] += 1 }
            if j["status"]?.stringValue == "ok" {
                // A report is read back from disk: its numbers are checked, not trusted to fit.
                frames = frames &+ (Int(inRange: j["framesOut"]?.numberValue ?? 0) ?? 0)
                bytes += j["outputBytes"]?.numberValue ?? 0
            }
            jobSeconds += j["wallSeconds"]?.numberValue ?? 0
        }
        var filesPerMinute: Double?
        if let w = wallSeconds, w > 0 { filesPerMinute = rounded(Double(counts[.ok]!) * 60 / w, 2) }
        return .obj([
            ("jobs", .int(jobs.count)),
            ("ok", .int(counts[.ok])),
            ("failed", .int(counts[.failed])),
            ("skipped", .int(counts[.skipped])),
            ("framesOut", .int(frames)),
            ("outputBytes", .num(bytes)),
            ("jobSeconds", .num(rounded(jobSeconds, 3))),
            ("wallSeconds", .num(wallSeconds.map { rounded($0, 3) })),
            ("filesPerMinute", .num(filesPerMinute)),
            ("warnings", .int(warnings)),
        ])
    }

    /// JUnit XML: one `testcase` per job; failed jobs are `failure`s with the error, skipped ones `skipped`.
    /// The preset's name, else its spec. (Written out step by step: the optional chains this
    /// replaced crashed the Swift 6.3 optimizer in release builds.)
    static func presetLabel(_ job: JSONValue) -> String {
        guard let preset = job["preset"] else { return "?" }
        if let name = preset["name"], let text = name.stringValue { return text }
        if let spec = preset["spec"], let text = spec.stringValue { return text }
        return "?"
    }

    private static func text(_ job: JSONValue, _ key: String) -> String? {
        guard let value = job[key] else { return nil }
        return value.stringValue
    }

    private static func number(_ job: JSONValue, _ key: String) -> Double? {
        guard let value = job[key] else { return nil }
        return value.numberValue
    }

    /// One job's <testcase>. (Plain statements throughout: optional chains over JSONValue here
    /// crashed the Swift 6.3 optimizer in release builds.)
    @inline(never)
    private static func junitCase(_ j: JSONValue) -> (xml: String, status: String, seconds: Double) {
        let input = text(j, "input") ?? "?"
        let output = text(j, "output") ?? "?"
        let preset = presetLabel(j)
        let seconds = number(j, "wallSeconds") ?? 0
        var xml = "    <testcase classname=\"\(xmlEscape("gpuencode.batch.\(preset)"))\" name=\"\(xmlEscape(input + " -> " + output))\" file=\"\(xmlEscape(input))\" time=\"\(format(seconds, 3))\""
        var details: [String] = []
        for key in ["framesIn", "framesOut", "inputDuration", "outputDuration", "avOffsetIn", "avOffsetOut", "fps", "outputBytes", "outputBitrate", "renderer"] {
            guard let v = j[key], !v.isNull else { continue }
            details.append("\(key)=\(JSONWriter.scalar(v) ?? "")")
        }
        var systemOut = details.isEmpty ? "" : "\n      <system-out>\(xmlEscape(details.joined(separator: " ")))</system-out>"
        // Warnings in <system-err>, where JUnit readers (Jenkins, GitLab) show a test's stderr.
        var warnings: [String] = []
        if let list = j["warnings"], let items = list.arrayValue {
            for item in items { if let text = item.stringValue { warnings.append(text) } }
        }
        if !warnings.isEmpty { systemOut += "\n      <system-err>\(xmlEscape(warnings.joined(separator: "\n")))</system-err>" }
        let status = text(j, "status") ?? "ok"
        switch status {
        case "failed":
            let message = text(j, "error") ?? "failed"
            let code = Int(inRange: number(j, "exitCode") ?? 1) ?? 1
            xml += ">\n      <failure message=\"\(xmlEscape(message))\" type=\"exit \(code)\">\(xmlEscape(message))</failure>\(systemOut)\n    </testcase>\n"
        case "skipped":
            xml += ">\n      <skipped message=\"\(xmlEscape(text(j, "reason") ?? "skipped"))\"/>\n    </testcase>\n"
        default:
            xml += systemOut.isEmpty ? "/>\n" : ">\(systemOut)\n    </testcase>\n"
        }
        return (xml, status, seconds)
    }

    public static func junit(jobs: [JSONValue], suiteName: String = "gpuencode batch") -> String {
        var failures = 0, skipped = 0
        var time = 0.0
        var cases = ""
        for j in jobs {
            let c = junitCase(j)
            time += c.seconds
            cases += c.xml
            if c.status == "failed" { failures += 1 }
            if c.status == "skipped" { skipped += 1 }
        }
        let attrs = "tests=\"\(jobs.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(format(time, 3))\""
        return """
        <?xml version="1.0" encoding="UTF-8"?>
        <testsuites name="\(xmlEscape(suiteName))" \(attrs)>
          <testsuite name="\(xmlEscape(suiteName))" \(attrs) timestamp="\(isoTimestamp())">

        """ + cases + "  </testsuite>\n</testsuites>\n"
    }

    /// Writes a report (or JUnit file) through a temporary and a rename, making its folder if needed.
    public static func write(_ text: String, to path: String) throws {
        try writeTextAtomically(text, to: path)
    }

    /// A report read back (for `report merge`), checked to be one of ours.
    public struct Loaded: Sendable {
        public let path: String
        public let planJobs: Int
        public let planDigest: String
        public let shard: Shard?
        public let jobs: [JSONValue]
        public let interrupted: Bool
        public let wallSeconds: Double?
    }

    // Plain statements, one optional at a time: chains of `?[...]?.x.flatMap` here crashed the
    // Swift 6.3 release optimizer (CopyPropagation "Found ownership error"), as BatchReport.junit did.
    public static func load(_ path: String) throws -> Loaded {
        guard fileExists(path) else { throw GPUEncodeError(.input, path: path, "no such report") }
        let bytes: [UInt8]
        do { bytes = try readFileSafely(path, kind: .report) } catch let e as FileReadError {
            throw GPUEncodeError(.input, path: path, "cannot read: \(e.reason)")
        }
        let json: JSONValue
        do { json = try JSONParser.parse(bytes: bytes) } catch let e as JSONSyntaxError {
            throw GPUEncodeError(.usage, path: path, "\(e.line):\(e.column): not JSON: \(e.message)")
        }
        guard json["schema"]?.stringValue == schema else {
            throw GPUEncodeError(.usage, path: path, "not a gpuencode batch report (no \"schema\": \"\(schema)\")")
        }
        let versionValue = json["version"]
        var versionNumber: Int? = nil
        if let v = versionValue?.numberValue { versionNumber = Int(wholeNumber: v) }
        if versionNumber != version {
            var shown = "?"
            if let v = versionValue, let text = JSONWriter.scalar(v) { shown = text }
            throw GPUEncodeError(.usage, path: path, "report version \(shown) is not \(version), which this gpuencode reads")
        }
        let plan = json["plan"]
        var planJobs: Int? = nil
        if let n = plan?["jobs"]?.numberValue { planJobs = Int(wholeNumber: n) }
        let digest = plan?["digest"]?.stringValue
        let jobs = json["jobs"]?.arrayValue
        guard let planJobs, let digest, let jobs else {
            throw GPUEncodeError(.usage, path: path, "report has no plan or jobs")
        }
        var shard: Shard?
        let shardValue = json["shard"]
        if let i = shardValue?["index"]?.numberValue, let n = shardValue?["count"]?.numberValue {
            guard let index = Int(wholeNumber: i), let count = Int(wholeNumber: n), count >= 1, (1...count).contains(index) else {
                throw GPUEncodeError(.usage, path: path, "report shard \(formatNumber(i))/\(formatNumber(n)) is not INDEX/COUNT with 1 <= INDEX <= COUNT")
            }
            shard = Shard(index: index, count: count)
        }
        var interrupted = false
        if let value = json["interrupted"], !value.isNull { interrupted = true }
        var wall: Double? = nil
        if let totals = json["totals"] { wall = totals["wallSeconds"]?.numberValue }
        return Loaded(path: path, planJobs: planJobs, planDigest: digest, shard: shard, jobs: jobs,
                      interrupted: interrupted, wallSeconds: wall)
    }

    /// Joins shard reports of one plan. Fails (81) when a job appears twice or the jobs do not add up
    /// to the plan, naming the job or the shards that are missing; reports of different plans are a
    /// usage error (64).
    public static func merge(_ reports: [Loaded]) throws -> JSONValue {
        guard let first = reports.first else { throw GPUEncodeError(.usage, "give the shard reports to merge") }
        for r in reports.dropFirst() where r.planDigest != first.planDigest || r.planJobs != first.planJobs {
            throw GPUEncodeError(.usage, path: r.path, "comes from another plan (\(r.planJobs) jobs, \(r.planDigest)) than \(first.path) (\(first.planJobs) jobs, \(first.planDigest)): the shards must run the same batch command")
        }
        var seen: [String: String] = [:]
        var jobs: [(Int, JSONValue)] = []
        for r in reports {
            for j in r.jobs {
                let id = j["id"]?.stringValue ?? j["output"]?.stringValue ?? "?"
                if let other = seen[id] {
                    throw GPUEncodeError(.reportMismatch, path: r.path, "job \(id) is also in \(other): duplicated across shard reports")
                }
                seen[id] = r.path
                jobs.append((Int(inRange: j["index"]?.numberValue ?? 0) ?? 0, j))
            }
        }
        if jobs.count != first.planJobs {
            var detail = ""
            let counts = Set(reports.compactMap { $0.shard?.count })
            if counts.count == 1, let n = counts.first {
                let have = Set(reports.compactMap { $0.shard?.index })
                let missing = (1...n).filter { !have.contains($0) }
                if !missing.isEmpty { detail = "; no report for shard " + missing.map { "\($0)/\(n)" }.joined(separator: ", ") }
            }
            let indexes = Set(jobs.map(\.0))
            let absent = (0..<first.planJobs).filter { !indexes.contains($0) }
            let named = absent.prefix(5).map { "#\($0)" }.joined(separator: ", ") + (absent.count > 5 ? ", ..." : "")
            throw GPUEncodeError(.reportMismatch, path: reports.map(\.path).joined(separator: ", "),
                                 "\(first.planJobs - jobs.count) of \(first.planJobs) planned jobs missing (\(named))\(detail)")
        }
        let interrupted = reports.contains { $0.interrupted }
        let wall = reports.compactMap(\.wallSeconds).max()
        return document(jobs: jobs.sorted { $0.0 < $1.0 }.map(\.1), planJobs: first.planJobs, planDigest: first.planDigest, shard: nil,
                        interrupted: interrupted ? 0 : nil, failFastStopped: false, wallSeconds: wall, mergedFrom: reports.map(\.path))
    }
}
