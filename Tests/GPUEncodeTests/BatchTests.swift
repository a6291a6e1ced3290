import Foundation
import GPUEncodeBatch
import GPUEncodeKit
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

// `gpuencode batch` and `gpuencode report merge`, driven as a CI job would: through the binary, with
// the reports read back as JSON/XML by Foundation. Clips are tiny (160x120, 0.5 s, ultrafast).

class BatchTestCase: GPUEncodeTestCase {
    /// The CI variables the shard logic reads, emptied so a CI runner's own do not shard the tests.
    static let quietCI: [String: String] = [
        "CI_NODE_INDEX": "", "CI_NODE_TOTAL": "", "CIRCLE_NODE_INDEX": "", "CIRCLE_NODE_TOTAL": "",
        "BUILDKITE_PARALLEL_JOB": "", "BUILDKITE_PARALLEL_JOB_COUNT": "", "JOB_COMPLETION_INDEX": "",
    ]

    func batch(_ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 300) throws -> ProcessResult {
        try gpuencode(["batch"] + arguments, timeout: timeout,
                      environment: BatchTestCase.quietCI.merging(environment) { _, new in new })
    }

    /// `names` as tiny clips in `folder` (created), returning the folder.
    @discardableResult
    func clips(_ names: [String], in folder: String, seconds: Double = 0.5) throws -> URL {
        let dir = scratch(folder)
        for name in names {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Oracle.makeClip(url, seconds: seconds, size: "160x120")
        }
        return dir
    }

    /// The `--dry-run` plan: shard, input, output, preset and what a run would do, one job per line.
    func plan(_ result: ProcessResult, file: StaticString = #filePath, line: UInt = #line) -> [[String]] {
        XCTAssertEqual(result.status, 0, result.summary, file: file, line: line)
        return result.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: "\t").map(String.init) }
    }

    func readJSON(_ url: URL) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
            throw OracleError("\(url.path) is not a JSON object")
        }
        return object
    }

    func jobs(_ report: [String: Any]) -> [[String: Any]] { report["jobs"] as? [[String: Any]] ?? [] }

    func statuses(_ report: [String: Any]) -> [String: String] {
        var out: [String: String] = [:]
        for j in jobs(report) { out[(j["input"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } ?? "?"] = j["status"] as? String }
        return out
    }

    /// Files left in a folder tree whose name says they are partial.
    func partialFiles(_ dir: URL) -> [String] {
        let all = FileManager.default.enumerator(atPath: dir.path)?.allObjects as? [String] ?? []
        return all.filter { $0.hasSuffix(".partial") }
    }

    let fast = ["--x264-preset", "ultrafast", "--progress", "none"]
}

final class BatchPlanTests: BatchTestCase {
    func testFoldersIncludeRecursiveAndTemplate() throws {
        let input = scratch("in")
        try FileManager.default.createDirectory(at: input.appendingPathComponent("sub/deeper"), withIntermediateDirectories: true)
        for name in ["a.mp4", "b.mov", "notes.txt", ".hidden.mp4", "sub/c.mp4", "sub/deeper/d.mkv"] {
            try Data("x".utf8).write(to: input.appendingPathComponent(name))
        }
        let out = scratch("out").path
        let flat = plan(try batch([input.path, "--out-dir", out, "--dry-run"]))
        XCTAssertEqual(flat.map { URL(fileURLWithPath: $0[1]).lastPathComponent }, ["a.mp4", "b.mov"], "top level only, no hidden or .txt")
        let deep = plan(try batch([input.path, "--recursive", "--include", "*.mp4,*.mkv", "--out-dir", out,
                                   "--name", "{stem}-{preset}.{ext}.mkv", "--preset", "sepia", "--dry-run"]))
        XCTAssertEqual(deep.map { $0[2] }, ["\(out)/a-sepia.mp4.mkv", "\(out)/sub/c-sepia.mp4.mkv", "\(out)/sub/deeper/d-sepia.mkv.mkv"])
        XCTAssertTrue(deep.allSatisfy { $0[3] == "sepia" && $0[4] == "run (new)" })
        let named = plan(try batch([input.appendingPathComponent("b.mov").path, "--out-dir", out, "--name", "x/{name}.mp4", "--dry-run"]))
        XCTAssertEqual(named.first?[2], "\(out)/x/b.mov.mp4")
    }

    func testManifestCSVAndJSON() throws {
        let dir = scratch("m")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("clips"), withIntermediateDirectories: true)
        let csv = dir.appendingPathComponent("jobs.csv")
        try "input,output,preset,crf,x264_preset\nclips/a.mp4,out/a.mp4,sepia,18,ultrafast\n\"clips/b, with comma.mp4\",,,,\n".write(to: csv, atomically: true, encoding: .utf8)
        let rows = plan(try batch(["--manifest", csv.path, "--out-dir", scratch("o").path, "--dry-run"]))
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows[0][1], dir.path + "/clips/a.mp4", "relative to the manifest's folder")
        XCTAssertEqual(rows[0][2], dir.path + "/out/a.mp4")
        XCTAssertEqual(rows[0][3], "sepia")
        XCTAssertEqual(rows[1][2], scratch("o").path + "/clips/b, with comma.mp4", "no output column: --out-dir, the folder mirrored")
        XCTAssertEqual(rows[1][3], "identity")

        let json = dir.appendingPathComponent("jobs.json")
        try #"{"jobs": [{"input": "clips/a.mp4", "output": "x.mkv", "preset": "grayscale", "keyint": 12}]}"#.write(to: json, atomically: true, encoding: .utf8)
        let j = plan(try batch(["--manifest", json.path, "--dry-run"]))
        XCTAssertEqual(j.map { $0[2] }, [dir.path + "/x.mkv"])

        try #"[{"input": "a.mp4", "colour": "red"}]"#.write(to: json, atomically: true, encoding: .utf8)
        assertCleanFailure(try batch(["--manifest", json.path, "--dry-run"]), exitCodes: [ExitCode.usage], mentioning: ["jobs.json", "colour"])
        try "input,crf\na.mp4,99\n".write(to: csv, atomically: true, encoding: .utf8)
        assertCleanFailure(try batch(["--manifest", csv.path, "--out-dir", "o", "--dry-run"]), exitCodes: [ExitCode.usage], mentioning: ["jobs.csv:2", "crf"])
    }

    /// Every encode setting a manifest takes reaches the job's settings, in any of the key spellings,
    /// over the batch's flags (metadata entries add to the flags' ones).
    func testManifestCarriesEveryEncodeSetting() throws {
        let dir = scratch("m")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let json = dir.appendingPathComponent("jobs.json")
        try #"""
        [{"input": "a.mp4", "output": "a.mkv", "codec": "hevc", "speed": "fast", "crf": 20, "x265-params": "bframes=2", "tune": "grain",
          "audio": "opus", "audio_tracks": [2, 1], "audioBitrate": "96k", "stripMetadata": true, "noLocation": "true",
          "copyts": true,
          "metadata": {"title": "Holiday", "comment": ""}, "bitrate": "3M", "keyint": 48, "profile": "main"},
         {"input": "b.mp4", "output": "out/b.mp4", "x264Preset": "slow"}]
        """#.write(to: json, atomically: true, encoding: .utf8)
        var request = BatchRequest()
        request.manifest = json.path
        var flags = EncodeOverrides()
        flags.audio = .aac
        flags.metadata = [MetadataEntry(key: "artist", value: "me")]
        request.overrides = flags
        let jobs = try BatchPlanner.plan(request).jobs
        let a = jobs[0].settings
        XCTAssertEqual(a.codec, .hevc)
        XCTAssertEqual(a.speed, "fast")
        XCTAssertEqual(a.crf, 20)
        XCTAssertEqual(a.videoParams, "bframes=2")
        XCTAssertEqual(a.tune, "grain")
        XCTAssertEqual(a.bitrate, 3_000_000)
        XCTAssertEqual(a.keyint, 48)
        XCTAssertEqual(a.profile, "main")
        XCTAssertEqual(a.audio, .opus)
        XCTAssertEqual(a.audioTracks, [2, 1])
        XCTAssertEqual(a.audioBitrate, 96_000)
        XCTAssertTrue(a.stripMetadata)
        XCTAssertTrue(a.dropLocation)
        XCTAssertTrue(a.copyts)
        XCTAssertFalse(jobs[1].settings.copyts, "the default: timelines start at 0")
        XCTAssertEqual(a.metadata, [MetadataEntry(key: "artist", value: "me"), MetadataEntry(key: "comment", value: ""), MetadataEntry(key: "title", value: "Holiday")])
        let b = jobs[1].settings
        XCTAssertEqual(b.codec, .h264)
        XCTAssertEqual(b.speed, "slow", "x264Preset is read as speed")
        XCTAssertEqual(b.audio, .aac, "the flag, where the row has none")
        XCTAssertEqual(b.metadata, [MetadataEntry(key: "artist", value: "me")])
        XCTAssertNotEqual(jobs[0].settingsDigest, jobs[1].settingsDigest)

        // CSV: metadata.KEY columns; a bad value names the row and the column.
        let csv = dir.appendingPathComponent("jobs.csv")
        try "input,output,metadata.title,audio-tracks,strip_metadata\na.mp4,a.mkv,Holiday,\"1,3\",yes\n".write(to: csv, atomically: true, encoding: .utf8)
        request.manifest = csv.path
        let c = try BatchPlanner.plan(request).jobs[0].settings
        XCTAssertEqual(c.metadata.last, MetadataEntry(key: "title", value: "Holiday"))
        XCTAssertEqual(c.audioTracks, [1, 3])
        XCTAssertTrue(c.stripMetadata)
        for (header, value, culprit) in [("audio", "mp3", "audio"), ("audio_tracks", "0", "audioTracks"), ("audioBitrate", "4M", "audioBitrate"),
                                         ("stripMetadata", "maybe", "stripMetadata"), ("codec", "h264_nvenc", "codec"), ("threads", "2", "threads")] {
            try "input,\(header)\na.mp4,\(value)\n".write(to: csv, atomically: true, encoding: .utf8)
            XCTAssertThrowsError(try BatchPlanner.plan(request), header) { error in
                let e = error as? GPUEncodeError
                XCTAssertEqual(e?.exitCode, 64, "\(header): \(error)")
                XCTAssertTrue(e?.description.contains(culprit) ?? false, "\(header): \(error)")
            }
        }
    }

    func testCollisionsAndBadTemplatesFailBeforeAnythingRuns() throws {
        let a = scratch("a"), b = scratch("b")
        try FileManager.default.createDirectory(at: a, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: b, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: a.appendingPathComponent("clip.mp4"))
        try Data("x".utf8).write(to: b.appendingPathComponent("clip.mov"))
        let out = scratch("out")
        let collide = try batch([a.path, b.path, "--out-dir", out.path])
        assertCleanFailure(collide, exitCodes: [ExitCode.usage], mentioning: ["clip.mp4", "clip.mov", "two jobs"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "nothing ran, not even the output folder")
        assertCleanFailure(try batch([a.path, "--out-dir", out.path, "--name", "{stem}.{colour}.mp4"]), exitCodes: [ExitCode.usage], mentioning: ["{colour}"])
        assertCleanFailure(try batch([a.path, "--out-dir", out.path, "--name", "{stem}.avi"]), exitCodes: [ExitCode.usage], mentioning: [".avi"])
        assertCleanFailure(try batch([a.path, "--out-dir", a.path, "--name", "{name}"]), exitCodes: [ExitCode.usage], mentioning: ["also an input"])
        assertCleanFailure(try batch([a.path, "--out-dir", out.path, "--preset", "sepiaa"]), exitCodes: [ExitCode.badPreset], mentioning: ["sepiaa"])
        assertCleanFailure(try batch([scratch("nope.mp4").path, "--out-dir", out.path]), exitCodes: [ExitCode.noInput], mentioning: ["nope.mp4"])
        assertCleanFailure(try batch([a.path, "--out-dir", out.path, "--shard", "0/3"]), exitCodes: [ExitCode.usage], mentioning: ["0/3"])
    }

    func testShardsPartitionTheJobsStablyAndFollowCIVariables() throws {
        let input = scratch("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let names = (0..<40).map { "clip\($0).mp4" }
        for n in names { try Data("x".utf8).write(to: input.appendingPathComponent(n)) }
        // Relative paths, as a CI job runs the same command in different checkouts.
        let base = ["in", "--out-dir", "out", "--dry-run"]
        func shard(_ extra: [String], env: [String: String] = [:]) throws -> Set<String> {
            Set(plan(try batch(base + extra, environment: env)).map { $0[1] })
        }
        // Relative paths are resolved against the working directory, which the child inherits.
        let saved = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(workDirectory.path)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(saved) }
        let parts = try (1...3).map { try shard(["--shard", "\($0)/3"]) }
        XCTAssertEqual(parts.map(\.count).reduce(0, +), 40)
        XCTAssertEqual(parts[0].union(parts[1]).union(parts[2]).count, 40, "every job in exactly one shard")
        XCTAssertTrue(parts.allSatisfy { $0.count >= 5 }, "shards roughly balanced: \(parts.map(\.count))")

        XCTAssertEqual(try shard([], env: ["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"]), parts[1], "GitLab counts from 1")
        XCTAssertEqual(try shard([], env: ["CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "3"]), parts[1], "CircleCI counts from 0")
        XCTAssertEqual(try shard([], env: ["BUILDKITE_PARALLEL_JOB": "2", "BUILDKITE_PARALLEL_JOB_COUNT": "3"]), parts[2])
        XCTAssertEqual(try shard(["--shard-count", "3"], env: ["JOB_COMPLETION_INDEX": "0"]), parts[0], "Kubernetes Indexed Job")
        XCTAssertEqual(try shard(["--shard", "1/1"], env: ["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"]).count, 40, "--shard wins over the variables")
        let bad = try batch(base, environment: ["CI_NODE_INDEX": "4", "CI_NODE_TOTAL": "3"])
        assertCleanFailure(bad, exitCodes: [ExitCode.usage], mentioning: ["CI_NODE_INDEX"])

        // Adding files moves no job that was already planned.
        for i in 40..<50 { try Data("x".utf8).write(to: input.appendingPathComponent("new\(i).mp4")) }
        let after = try (1...3).map { try shard(["--shard", "\($0)/3"]) }
        for k in 0..<3 { XCTAssertTrue(parts[k].isSubset(of: after[k]), "shard \(k + 1) kept its jobs") }
    }

    /// A machine that looks sharded but cannot tell which shard it is fails with 64 and one line before
    /// anything runs, instead of running every job (once per pod or per CI node).
    func testHalfSetShardVariablesAreUsageErrors() throws {
        let input = scratch("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for n in ["a.mp4", "b.mp4", "c.mp4"] { try Data("x".utf8).write(to: input.appendingPathComponent(n)) }
        let out = scratch("out")
        let base = [input.path, "--out-dir", out.path, "--progress", "none"]

        // A Kubernetes Indexed Job pod without --shard-count: the one line says what to give.
        let k8s = try batch(base, environment: ["JOB_COMPLETION_INDEX": "3"])
        assertCleanFailure(k8s, exitCodes: [ExitCode.usage], mentioning: ["JOB_COMPLETION_INDEX=3", "--shard-count", "--shard INDEX/COUNT"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "nothing ran, not even the output folder")
        // Dry runs too, and an index of 0 (the first pod) is no exception.
        assertCleanFailure(try batch(base + ["--dry-run"], environment: ["JOB_COMPLETION_INDEX": "0"]),
                           exitCodes: [ExitCode.usage], mentioning: ["JOB_COMPLETION_INDEX=0", "--shard-count"])

        // Each CI's pair, half set: an index without its total, a total above 1 without its index.
        let halves: [(String, String)] = [
            ("CI_NODE_INDEX", "CI_NODE_TOTAL"), ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL"),
            ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT"),
        ]
        for (index, total) in halves {
            assertCleanFailure(try batch(base + ["--dry-run"], environment: [index: "1"]),
                               exitCodes: [ExitCode.usage], mentioning: ["\(index)=1", total])
            assertCleanFailure(try batch(base + ["--dry-run"], environment: [total: "4"]),
                               exitCodes: [ExitCode.usage], mentioning: ["\(total)=4", index])
        }
        // GitLab sets CI_NODE_TOTAL=1 on every job without `parallel:`: that alone is no shard and no error.
        XCTAssertEqual(plan(try batch(base + ["--dry-run"], environment: ["CI_NODE_TOTAL": "1"])).count, 3)

        // An explicit --shard wins over any variable, half set or not; --shard-count reads JOB_COMPLETION_INDEX.
        let all = Set(plan(try batch(base + ["--dry-run", "--shard", "1/1"], environment: ["JOB_COMPLETION_INDEX": "3"])).map { $0[1] })
        XCTAssertEqual(all.count, 3)
        XCTAssertEqual(plan(try batch(base + ["--dry-run", "--shard", "1/1"], environment: ["CI_NODE_INDEX": "2"])).count, 3)
        let pods = try (0..<2).map { i in
            Set(plan(try batch(base + ["--dry-run", "--shard-count", "2"], environment: ["JOB_COMPLETION_INDEX": "\(i)"])).map { $0[1] })
        }
        XCTAssertEqual(pods[0].union(pods[1]), all, "the pods of --shard-count 2 cover the plan")
        XCTAssertTrue(pods[0].isDisjoint(with: pods[1]))
        // --shard-count is the flag for JOB_COMPLETION_INDEX, so it needs it even where another CI's pair is set.
        assertCleanFailure(try batch(base + ["--dry-run", "--shard-count", "2"], environment: ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2"]),
                           exitCodes: [ExitCode.usage], mentioning: ["--shard-count 2", "JOB_COMPLETION_INDEX"])
    }
}

final class BatchResumeTests: BatchTestCase {
    func testSkipForceChangedInputAndPreset() throws {
        let input = try clips(["a.mp4", "b.mp4"], in: "in")
        let out = scratch("out")
        let report = scratch("r.json")
        let first = try batch([input.path, "--out-dir", out.path, "--preset", "sepia", "--report", report.path] + fast)
        XCTAssertEqual(first.status, 0, first.summary)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "ok", "b.mp4": "ok"])
        let state = try readJSON(out.appendingPathComponent(".gpuencode-state.json"))
        XCTAssertEqual((state["jobs"] as? [String: Any])?.count, 2)

        // A rerun redoes nothing.
        let again = try batch([input.path, "--out-dir", out.path, "--preset", "sepia", "--report", report.path] + fast)
        XCTAssertEqual(again.status, 0, again.summary)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "skipped", "b.mp4": "skipped"])
        XCTAssertEqual(jobs(try readJSON(report)).first?["reason"] as? String, "up to date")

        // A changed input is redone, the other kept.
        let a = input.appendingPathComponent("a.mp4")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: a.path)
        XCTAssertEqual(try batch([input.path, "--out-dir", out.path, "--preset", "sepia", "--report", report.path] + fast).status, 0)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "ok", "b.mp4": "skipped"])

        // With --hash, a touched but identical input is not redone.
        XCTAssertEqual(try batch([input.path, "--out-dir", out.path, "--preset", "sepia", "--hash"] + fast).status, 0)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 120)], ofItemAtPath: a.path)
        XCTAssertEqual(try batch([input.path, "--out-dir", out.path, "--preset", "sepia", "--hash", "--report", report.path] + fast).status, 0)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "skipped", "b.mp4": "skipped"])

        // Another preset redoes both; --force redoes everything.
        XCTAssertEqual(try batch([input.path, "--out-dir", out.path, "--preset", "grayscale", "--report", report.path] + fast).status, 0)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "ok", "b.mp4": "ok"])
        XCTAssertEqual(jobs(try readJSON(report)).first?["reason"] as? String, "preset changed")
        XCTAssertEqual(try batch([input.path, "--out-dir", out.path, "--preset", "grayscale", "--force", "--report", report.path] + fast).status, 0)
        XCTAssertEqual(statuses(try readJSON(report)), ["a.mp4": "ok", "b.mp4": "ok"])
    }

    func testOutputsNotInTheStateNeedSkipExistingOrForce() throws {
        let input = try clips(["a.mp4"], in: "in")
        let out = scratch("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try Data("someone else's".utf8).write(to: out.appendingPathComponent("a.mp4"))
        let refused = try batch([input.path, "--out-dir", out.path] + fast)
        XCTAssertEqual(refused.status, 80, refused.summary)
        XCTAssertTrue(refused.stderr.contains("a.mp4: already exists"), refused.stderr)
        let skipped = try batch([input.path, "--out-dir", out.path, "--skip-existing", "--report", scratch("r.json").path] + fast)
        XCTAssertEqual(skipped.status, 0, skipped.summary)
        XCTAssertEqual(statuses(try readJSON(scratch("r.json"))), ["a.mp4": "skipped"])
        XCTAssertEqual(try Data(contentsOf: out.appendingPathComponent("a.mp4")), Data("someone else's".utf8))
        XCTAssertEqual(try batch([input.path, "--out-dir", out.path, "--force"] + fast).status, 0)
        XCTAssertEqual(try Oracle.streams(out.appendingPathComponent("a.mp4")).first?.codecName, "h264")
    }
}

final class BatchReportTests: BatchTestCase {
    func testJSONReportFieldsAndJUnit() throws {
        let input = try clips(["good.mp4"], in: "in")
        try Data("not a movie".utf8).write(to: input.appendingPathComponent("bad.mp4"))
        let report = scratch("reports/r.json"), junit = scratch("reports/r.xml")
        let result = try batch([input.path, "--out-dir", scratch("out").path, "--preset", "sepia", "--report", report.path, "--junit", junit.path] + fast)
        XCTAssertEqual(result.status, 80, result.summary)
        let r = try readJSON(report)
        XCTAssertEqual(r["schema"] as? String, "gpuencode-batch-report")
        XCTAssertEqual(r["version"] as? Int, 1)
        for key in ["gpuencodeVersion", "createdAt", "plan", "shard", "interrupted", "jobs", "totals"] { XCTAssertNotNil(r[key], key) }
        let all = jobs(r)
        XCTAssertEqual(all.count, 2)
        let good = try XCTUnwrap(all.first { ($0["input"] as? String)?.hasSuffix("good.mp4") == true })
        for key in ["id", "input", "output", "preset", "status", "reason", "error", "exitCode", "inputDuration", "outputDuration", "framesIn",
                    "framesOut", "avOffsetIn", "avOffsetOut", "wallSeconds", "fps", "outputBytes", "outputBitrate", "renderer"] {
            XCTAssertTrue(good.keys.contains(key), "job entry lacks \(key)")
        }
        XCTAssertEqual(good["status"] as? String, "ok")
        XCTAssertEqual((good["preset"] as? [String: Any])?["name"] as? String, "sepia")
        XCTAssertTrue(((good["preset"] as? [String: Any])?["digest"] as? String)?.hasPrefix("fnv1a64:") == true)
        XCTAssertEqual(good["framesIn"] as? Int, 13)
        XCTAssertEqual(good["framesOut"] as? Int, 13)
        XCTAssertEqual(good["inputDuration"] as? Double ?? 0, 0.52, accuracy: 0.05)
        XCTAssertEqual(good["outputDuration"] as? Double ?? 0, 0.52, accuracy: 0.05)
        XCTAssertEqual(good["avOffsetOut"] as? Double ?? 9, good["avOffsetIn"] as? Double ?? -9, accuracy: 0.001)
        XCTAssertGreaterThan(good["outputBytes"] as? Int ?? 0, 1000)
        XCTAssertGreaterThan(good["outputBitrate"] as? Double ?? 0, 0)
        XCTAssertFalse((good["renderer"] as? String ?? "").isEmpty)
        let bad = try XCTUnwrap(all.first { ($0["input"] as? String)?.hasSuffix("bad.mp4") == true })
        XCTAssertEqual(bad["status"] as? String, "failed")
        XCTAssertEqual(bad["exitCode"] as? Int, 66)
        XCTAssertTrue((bad["error"] as? String ?? "").contains("bad.mp4"))
        let totals = try XCTUnwrap(r["totals"] as? [String: Any])
        XCTAssertEqual(totals["ok"] as? Int, 1)
        XCTAssertEqual(totals["failed"] as? Int, 1)

        // The JUnit file parses, with one test case per job and the failure carrying the error.
        let xml = try XMLDocument(contentsOf: junit)
        let cases = try xml.nodes(forXPath: "//testsuite/testcase")
        XCTAssertEqual(cases.count, 2)
        let failures = try xml.nodes(forXPath: "//testcase/failure")
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(((failures.first as? XMLElement)?.attribute(forName: "message")?.stringValue ?? "").contains("bad.mp4"))
        XCTAssertEqual((try xml.nodes(forXPath: "/testsuites/@failures").first)?.stringValue, "1")
    }

    func testJSONProgressEvents() throws {
        let input = try clips(["a.mp4", "b.mp4"], in: "in")
        let result = try batch([input.path, "--out-dir", scratch("out").path, "--x264-preset", "ultrafast", "--progress", "json"])
        XCTAssertEqual(result.status, 0, result.summary)
        let events = result.stderrLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(events.count, result.stderrLines.count, "every stderr line is a JSON event")
        XCTAssertEqual(events.filter { $0["event"] as? String == "start" }.count, 2)
        XCTAssertEqual(events.filter { $0["event"] as? String == "end" }.count, 2)
        XCTAssertEqual(events.last?["event"] as? String, "done")
    }
}

final class BatchFailureTests: BatchTestCase {
    func testBrokenInputContinueVersusFailFast() throws {
        let input = try clips(["c1.mp4", "c2.mp4", "c3.mp4"], in: "in")
        try Data("garbage".utf8).write(to: input.appendingPathComponent("c0.mp4"))  // sorted first
        let out = scratch("out")
        let report = scratch("r.json")
        let all = try batch([input.path, "--out-dir", out.path, "--jobs", "1", "--report", report.path] + fast)
        XCTAssertEqual(all.status, 80, all.summary)
        XCTAssertEqual(statuses(try readJSON(report)), ["c0.mp4": "failed", "c1.mp4": "ok", "c2.mp4": "ok", "c3.mp4": "ok"])
        XCTAssertEqual(all.stderrLines.filter { $0.contains("c0.mp4") }.count, 1, "one line for the broken file: \(all.stderrLines)")

        let out2 = scratch("out2")
        let stopped = try batch([input.path, "--out-dir", out2.path, "--jobs", "1", "--fail-fast", "--report", report.path] + fast)
        XCTAssertEqual(stopped.status, 80, stopped.summary)
        let r = try readJSON(report)
        XCTAssertEqual(statuses(r), ["c0.mp4": "failed", "c1.mp4": "skipped", "c2.mp4": "skipped", "c3.mp4": "skipped"])
        XCTAssertEqual(r["failFastStopped"] as? Bool, true)
        XCTAssertTrue(partialFiles(out2).isEmpty)
    }

    func testTwoConcurrentJobsEachWithItsOwnContext() throws {
        let input = try clips(["a.mp4", "b.mp4", "c.mp4", "d.mp4"], in: "in")
        let report = scratch("r.json")
        let result = try batch([input.path, "--out-dir", scratch("out").path, "--jobs", "2", "--preset", "sepia", "--report", report.path] + fast)
        XCTAssertEqual(result.status, 0, result.summary)
        let entries = jobs(try readJSON(report))
        XCTAssertEqual(Set(entries.compactMap { $0["worker"] as? Int }), [1, 2], "both workers ran jobs")
        XCTAssertTrue(entries.allSatisfy { $0["framesOut"] as? Int == 13 })
    }
}

final class BatchInterruptTests: BatchTestCase {
    func testSIGINTMidBatchLeavesNoPartialFilesAndWritesStateAndReport() throws {
        // Slow enough to be caught mid-job: 8 s clips at x264's slowest preset.
        let input = try clips(["c1.mp4", "c2.mp4", "c3.mp4"], in: "in", seconds: 8)
        let out = scratch("out")
        let report = scratch("r.json"), junit = scratch("r.xml")
        let process = try RunningProcess(try Paths.gpuencode(), ["batch", input.path, "--out-dir", out.path, "--jobs", "2", "--x264-preset", "placebo",
                                                                  "--report", report.path, "--junit", junit.path, "--progress", "none"],
                                         environment: BatchTestCase.quietCI)
        Thread.sleep(forTimeInterval: 1.5)
        process.send(SIGINT)
        let result = try process.wait(timeout: 120)
        XCTAssertFalse(result.signalled, result.summary)
        XCTAssertEqual(result.status, ExitCode.interrupted, result.summary)
        XCTAssertTrue(partialFiles(out).isEmpty, "partial files left: \(partialFiles(out))")
        let r = try readJSON(report)
        XCTAssertEqual((r["interrupted"] as? [String: Any])?["signal"] as? Int, 2)
        XCTAssertEqual(jobs(r).count, 3)
        XCTAssertTrue(FileManager.default.fileExists(atPath: junit.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: out.appendingPathComponent(".gpuencode-state.json").path))
        // Outputs that exist are complete movies.
        for name in ["c1.mp4", "c2.mp4", "c3.mp4"] where FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path) {
            XCTAssertEqual(statuses(r)[name], "ok")
        }
    }
}

final class BatchMergeTests: BatchTestCase {
    func testMergeJoinsShardsAndCatchesMissingAndDuplicated() throws {
        let input = try clips(["a.mp4", "b.mp4", "c.mp4", "d.mp4", "e.mp4", "f.mp4"], in: "in")
        let saved = FileManager.default.currentDirectoryPath
        _ = FileManager.default.changeCurrentDirectoryPath(workDirectory.path)
        defer { _ = FileManager.default.changeCurrentDirectoryPath(saved) }
        var reports: [String] = []
        for k in 1...2 {
            let r = scratch("shard\(k).json").path
            let result = try batch(["in", "--out-dir", "out", "--shard", "\(k)/2", "--report", r] + fast)
            XCTAssertEqual(result.status, 0, result.summary)
            reports.append(r)
        }
        _ = input
        let merged = scratch("all.json"), junit = scratch("all.xml")
        let ok = try gpuencode(["report", "merge"] + reports + ["-o", merged.path, "--junit", junit.path])
        XCTAssertEqual(ok.status, 0, ok.summary)
        let all = try readJSON(merged)
        XCTAssertEqual(jobs(all).count, 6)
        XCTAssertEqual((all["totals"] as? [String: Any])?["ok"] as? Int, 6)
        XCTAssertEqual(try XMLDocument(contentsOf: junit).nodes(forXPath: "//testcase").count, 6)

        let missing = try gpuencode(["report", "merge", reports[0], "-o", scratch("m.json").path])
        assertCleanFailure(missing, exitCodes: [81], mentioning: ["missing", "shard 2/2"])
        let twice = try gpuencode(["report", "merge", reports[0], reports[1], reports[0], "-o", scratch("m.json").path])
        assertCleanFailure(twice, exitCodes: [81], mentioning: ["duplicated"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch("m.json").path))

        // A report of another plan is refused.
        let other = scratch("other.json").path
        XCTAssertEqual(try batch(["in", "--out-dir", "out", "--preset", "sepia", "--shard", "2/2", "--report", other] + fast).status, 0)
        assertCleanFailure(try gpuencode(["report", "merge", reports[0], other, "-o", scratch("m.json").path]),
                           exitCodes: [ExitCode.usage], mentioning: ["another plan"])
    }
}

/// Issue 14: batch progress for scripts. JSON mode's stderr parses line by line with a job that
/// warns and one that fails; warnings reach the JSON and JUnit reports; -progress pipe:1 gives
/// ffmpeg's blocks for the whole batch, its end frame the sum of ffprobe's counts; kv lines parse.
final class BatchProgressTests: BatchTestCase {
    /// a.mp4 plain, b.mp4 10-bit (warns: written as 8-bit), c.mp4 not a movie (fails).
    func mixedJobs() throws -> URL {
        let dir = try clips(["a.mp4"], in: "in")
        try Oracle.makeClip(dir.appendingPathComponent("b.mp4"), seconds: 0.5, size: "160x120", audio: false,
                            videoArguments: ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le"])
        try Data("not a movie".utf8).write(to: dir.appendingPathComponent("c.mp4"))
        return dir
    }

    /// Errors found before the batch starts (a mistyped option, a bad value, ffmpeg's -preset, no inputs)
    /// are error events too when the stream is JSON (--progress json, or auto off a terminal, as here);
    /// -q keeps the plain line.
    func testUsageErrorsAreJSONEventsInJSONMode() throws {
        let dir = try clips(["a.mp4"], in: "in")
        let out = scratch("out").path
        let cases: [([String], Int32)] = [
            (["--bogus"], 64),
            ([dir.path, "--out-dir", out, "--crf", "99"], 64),
            ([dir.path, "--out-dir", out, "-preset", "fast"], 64),
            ([dir.path, "--out-dir", out, "--progress", "json", "--keyint", "x"], 64),
            ([scratch("nothing-here").path, "--out-dir", out], 66),
        ]
        for (args, code) in cases {
            let r = try batch(args)
            XCTAssertEqual(r.status, code, r.summary)
            XCTAssertEqual(r.stderrLines.count, 1, r.stderr)
            let event = try? JSONSerialization.jsonObject(with: Data((r.stderrLines.first ?? "").utf8)) as? [String: Any]
            XCTAssertEqual(event?["event"] as? String, "error", "\(args): not an error event: \(r.stderr)")
            XCTAssertEqual(event?["exitCode"] as? Int, Int(code), r.stderr)
        }
        let quiet = try batch(["--bogus", "-q"])
        XCTAssertEqual(quiet.status, 64)
        XCTAssertTrue(quiet.stderr.hasPrefix("gpuencode: error: "), quiet.stderr)
    }

    func testJSONModeEveryStderrLineParsesWithWarningAndFailure() throws {
        let dir = try mixedJobs()
        let report = scratch("r.json"), junit = scratch("r.xml")
        let r = try batch([dir.path, "--out-dir", scratch("out").path, "--jobs", "1", "--progress", "json", "--x264-preset", "ultrafast",
                           "--report", report.path, "--junit", junit.path])
        XCTAssertEqual(r.status, 80, r.summary)
        var events: [[String: Any]] = []
        for line in r.stderrLines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            XCTAssertNotNil(object, "not JSON: \(line)")
            if let object { events.append(object) }
        }
        let names = events.compactMap { $0["event"] as? String }
        XCTAssertTrue(Set(["start", "warning", "end", "done", "error"]).isSubset(of: Set(names)), "\(names)")
        let warning = try XCTUnwrap(events.first { $0["event"] as? String == "warning" }, r.stderr)
        XCTAssertEqual(warning["job"] as? Int, 1, "the warning names b.mp4's job")
        XCTAssertTrue((warning["message"] as? String ?? "").contains("10-bit"), "\(warning)")
        let failed = try XCTUnwrap(events.first { $0["event"] as? String == "end" && $0["status"] as? String == "failed" })
        XCTAssertEqual(failed["exitCode"] as? Int, 66)
        XCTAssertTrue((failed["error"] as? String ?? "").contains("c.mp4"))
        XCTAssertEqual(events.last?["event"] as? String, "error")
        XCTAssertEqual(events.last?["exitCode"] as? Int, 80)

        let jobs = self.jobs(try readJSON(report))
        let b = try XCTUnwrap(jobs.first { ($0["input"] as? String)?.hasSuffix("b.mp4") == true })
        XCTAssertTrue((b["warnings"] as? [String])?.first?.contains("10-bit") == true, "\(b["warnings"] ?? "none")")
        XCTAssertEqual((jobs.first { ($0["input"] as? String)?.hasSuffix("a.mp4") == true }?["warnings"] as? [String])?.count, 0)
        XCTAssertEqual((try readJSON(report)["totals"] as? [String: Any])?["warnings"] as? Int, 1)
        let xml = try XMLDocument(contentsOf: junit)
        let errs = try xml.nodes(forXPath: "//testcase/system-err")
        XCTAssertEqual(errs.count, 1)
        XCTAssertTrue(errs.first?.stringValue?.contains("10-bit") == true)
    }

    func testProgressURLForTheWholeBatch() throws {
        let dir = try clips(["a.mp4", "b.mp4", "c.mp4"], in: "in")
        let out = scratch("out")
        let r = try batch([dir.path, "--out-dir", out.path, "-progress", "pipe:1", "--stats-period", "0.05", "-q", "--x264-preset", "ultrafast"])
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertEqual(r.stderr, "", "-q: nothing on stderr")
        let blocks = progressBlocks(r.stdout)
        let last = try XCTUnwrap(blocks.last, r.stdout)
        XCTAssertEqual(value(last, "progress"), "end")
        XCTAssertEqual(blocks.filter { value($0, "progress") == "end" }.count, 1)
        var frames = 0
        for name in ["a", "b", "c"] { frames += try Oracle.frameTimes(out.appendingPathComponent("\(name).mp4")).count }
        XCTAssertEqual(value(last, "frame").flatMap { Int($0) }, frames, "the batch's frames are the outputs' frames (ffprobe)")
        XCTAssertEqual(value(last, "jobs"), "3")
        XCTAssertEqual(value(last, "jobs_done"), "3")
        for key in ["fps", "bitrate", "total_size", "out_time_us", "out_time_ms", "out_time", "dup_frames", "drop_frames", "speed"] {
            XCTAssertNotNil(value(last, key), "\(key) missing")
        }
        // A file: replaced as the reports are (batch has no -y), a symlink refused (73), its target untouched.
        let file = scratch("p.txt")
        try Data("old\n".utf8).write(to: file)
        let toFile = try batch([dir.path, "--out-dir", scratch("out2").path, "--progress-url", file.path, "-q", "--x264-preset", "ultrafast"])
        XCTAssertEqual(toFile.status, 0, toFile.summary)
        XCTAssertEqual(progressBlocks(try String(contentsOf: file, encoding: .utf8)).last.flatMap { value($0, "progress") }, "end")
        let victim = scratch("victim.txt"), link = scratch("link.txt")
        try Data("victim\n".utf8).write(to: victim)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: victim.path)
        let viaLink = try batch([dir.path, "--out-dir", scratch("out3").path, "--progress-url", link.path, "--progress", "none"])
        assertCleanFailure(viaLink, exitCodes: [ExitCode.cannotCreate], mentioning: [link.path, "symbolic link"])
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "victim\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch("out3").appendingPathComponent("a.mp4").path), "nothing ran")

        let dry = try batch([dir.path, "--out-dir", out.path, "--dry-run", "-progress", "pipe:1"])
        assertCleanFailure(dry, exitCodes: [ExitCode.usage], mentioning: ["--dry-run", "pipe:1"])
    }

    /// On a 40-column terminal every line of the live block (job lines with a long file name, the
    /// total bar) fits in 39 characters, so the cursor-up redraw never meets a wrapped line.
    func testNarrowTerminalBlockFits() throws {
        let long = "a-very-long-clip-name-that-does-not-fit-in-forty-columns.mp4"
        let dir = try clips([long, "b.mp4"], in: "in", seconds: 1)
        let r = try ProgressTests.onTerminal(columns: 40, [try Paths.gpuencode(), "batch", dir.path, "--out-dir", scratch("out").path,
                                                           "--x264-preset", "ultrafast", "--jobs", "2"], environment: BatchTestCase.quietCI)
        XCTAssertEqual(r.status, 0, r.summary + r.stdout)
        let plain = r.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9]*[A-Za-z]", with: "", options: .regularExpression)
            .replacingOccurrences(of: "\r\n", with: "\n")
        let lines = plain.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).map(String.init)
        let block = lines.filter { $0.hasPrefix("  [") || $0.hasPrefix("[") }
        XCTAssertTrue(block.contains { $0.contains("…") && $0.contains("columns.mp4") }, "the long name is shortened from the front: \(block)")
        XCTAssertTrue(block.contains { $0.hasPrefix("[") && $0.contains("2/2 done") }, "\(block)")
        for line in block { XCTAssertLessThanOrEqual(line.count, 39, "wider than the terminal: \(line)") }
        XCTAssertTrue(lines.last?.hasPrefix("gpuencode: batch: 2 ok") == true, "\(lines.last ?? "")")
    }

    /// Three 0.4 s clips, then a 6 s one (--jobs 1, name order): when the long one starts the batch
    /// is 1.2 s of 7.2 s of media done, about 17%, not 3 of 4 jobs (75%) as the job count said.
    func testBatchShareWeighsJobsByDuration() throws {
        let dir = try clips(["a.mp4", "b.mp4", "c.mp4"], in: "in", seconds: 0.4)
        try Oracle.makeClip(dir.appendingPathComponent("z.mp4"), seconds: 6, size: "160x120")
        let r = try batch([dir.path, "--out-dir", scratch("out").path, "--jobs", "1", "--progress", "json", "--x264-preset", "ultrafast"])
        XCTAssertEqual(r.status, 0, r.summary)
        let events = r.stderrLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let first = try XCTUnwrap(events.first { $0["event"] as? String == "progress" && $0["job"] as? Int == 3 }, r.stderr)
        let share = try XCTUnwrap(first["batchPercent"] as? Double ?? (first["batchPercent"] as? Int).map(Double.init), "\(first)")
        let expected = (1.2 + (first["time"] as? Double ?? 0)) / 7.2 * 100
        XCTAssertEqual(share, expected, accuracy: 3, "batchPercent \(share) at the long job's start; by media \(expected), by job count 75")
    }

    func testKVLinesParse() throws {
        let dir = try clips(["a.mp4", "b.mp4"], in: "in")
        let r = try batch([dir.path, "--out-dir", scratch("out").path, "--progress", "kv", "--x264-preset", "ultrafast"])
        XCTAssertEqual(r.status, 0, r.summary)
        let lines = r.stderrLines.filter { $0.hasPrefix("progress ") }
        XCTAssertEqual(lines.filter { $0.contains(" status=ok ") }.count, 2, r.stderr)
        for line in lines {
            for word in line.split(separator: " ").dropFirst() { XCTAssertTrue(word.contains("="), "not key=value: \(word) in \(line)") }
        }
        XCTAssertEqual(r.stderrLines.filter { !$0.hasPrefix("progress ") }.map { $0.hasPrefix("gpuencode: batch: 2 ok") }, [true], r.stderr)
    }
}

/// Batch jobs rendering on one shared GL context (`GLThread`; the default on hardware GPUs) write
/// exactly what jobs with a context each write: different presets (a fused pass, a chain of passes
/// with a reduced blur, a lookup table, a plain matrix) and sizes interleaved on one context, into
/// MP4 and Matroska, through both transfer paths. Forced on here (llvmpipe) with GPUENCODE_SHARED_GL.
final class BatchSharedContextTests: BatchTestCase {
    func testSharedContextWritesWhatContextsOfTheirOwnWrite() throws {
        let input = try clips(["a.mp4", "b.mp4", "c.mp4", "d.mp4"], in: "in", seconds: 1)
        try Oracle.makeClip(input.appendingPathComponent("e.mp4"), seconds: 1, size: "320x240")
        let jobs: [(String, String, String)] = [("a.mp4", "a.mp4", "sepia"), ("b.mp4", "b.mkv", "heavyblur"), ("c.mp4", "c.mp4", "1977"),
                                                 ("d.mp4", "d.mkv", "grayscale"), ("e.mp4", "e.mkv", "sepia")]
        /// The manifest of one run, its outputs in `out`.
        func manifest(_ out: URL) throws -> URL {
            let rows = jobs.map { #"{"input": "\#(input.appendingPathComponent($0.0).path)", "output": "\#(out.appendingPathComponent($0.1).path)", "preset": "\#($0.2)"}"# }
            let file = scratch(out.lastPathComponent + ".json")
            try #"{"jobs": [\#(rows.joined(separator: ", "))]}"#.write(to: file, atomically: true, encoding: .utf8)
            return file
        }

        func packets(_ file: URL) throws -> String {
            try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"])
                .stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        }
        for transfer in ["client", "pbo"] {
            var written: [String: [String: String]] = [:]
            for shared in ["1", "0"] {
                let out = scratch("out-\(transfer)-\(shared)")
                let result = try batch(["--manifest", try manifest(out).path, "--jobs", "3", "-v"] + fast,
                                       environment: ["GPUENCODE_SHARED_GL": shared, "GPUENCODE_TRANSFER": transfer])
                XCTAssertEqual(result.status, 0, "\(transfer), shared \(shared): \(result.summary)")
                XCTAssertEqual(result.stderr.contains("one context for every job"), shared == "1",
                               "\(transfer), shared \(shared): whether the batch says it shares one context: \(result.stderr.suffix(2000))")
                for (source, output, _) in jobs {
                    let file = out.appendingPathComponent(output)
                    XCTAssertEqual(try Oracle.frameTimes(file).count, try Oracle.frameTimes(input.appendingPathComponent(source)).count,
                                   "\(transfer), shared \(shared): \(output) has every frame")
                    written[output, default: [:]][shared] = try packets(file)
                }
            }
            for (output, runs) in written.sorted(by: { $0.key < $1.key }) {
                XCTAssertEqual(runs["1"], runs["0"], "\(transfer): \(output) from the shared context differs from its own context's")
            }
        }
    }
}
