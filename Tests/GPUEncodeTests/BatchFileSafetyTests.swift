import Foundation
import XCTest

// Issue 10 for `gpuencode batch`: names that leave --out-dir, a state file shared by two batches,
// one output folder spelled two ways, and state files this version cannot read.
final class BatchFileSafetyTests: BatchTestCase {
    func testNamesThatLeaveTheOutputFolderAreRefused() throws {
        let input = try clips(["a.mp4", "...mp4"], in: "clips")
        let out = scratch("out")
        let before = listing(workDirectory)
        for name in ["../x-{stem}.mp4", "sub/../../x-{stem}.mp4", "{stem}/../../{name}"] {
            let result = try batch([input.appendingPathComponent("a.mp4").path, "--out-dir", out.path, "--name", name] + fast)
            assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["--name"], outputDirectory: workDirectory, before: before)
        }
        // A field can expand to `..` too: the stem of "...mp4" is "..".
        let sneaky = try batch([input.appendingPathComponent("...mp4").path, "--out-dir", out.path, "--name", "{stem}/x.mp4"] + fast)
        assertCleanFailure(sneaky, exitCodes: [ExitCode.usage], mentioning: ["leaves --out-dir"], outputDirectory: workDirectory, before: before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path))
    }

    /// A FIFO or a device named as a batch input fails that job (66 in the report, 80 overall) at
    /// once instead of holding a worker forever; the other jobs run.
    func testFIFOAndDeviceInputsFailTheirJobsWithoutAHang() throws {
        let dir = try clips(["a.mp4"], in: "clips")
        let fifo = scratch("stream.mp4")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let result = try batch([dir.appendingPathComponent("a.mp4").path, fifo.path, "/dev/zero", "--out-dir", scratch("out").path,
                                "--report", scratch("r.json").path] + fast)
        XCTAssertFalse(result.signalled, result.summary)
        XCTAssertEqual(result.status, 80, result.summary)
        let report = statuses(try readJSON(scratch("r.json")))
        XCTAssertEqual(report.values.filter { $0 == "failed" }.count, 2, "\(report)")
        XCTAssertEqual(report.values.filter { $0 == "done" || $0 == "succeeded" || $0 == "ok" }.count, 1, "\(report)")
        XCTAssertTrue(result.stderr.contains("not a regular file"), result.stderr)
        XCTAssertEqual(partialFiles(workDirectory), [])
    }

    func testTwoBatchesSharingAStateFileKeepEachOthersRecords() throws {
        let one = try clips(["a.mp4", "b.mp4"], in: "one")
        let two = try clips(["c.mp4", "d.mp4"], in: "two")
        let out = scratch("out").path
        let state = scratch("shared-state.json").path
        let binary = try Paths.gpuencode()
        func arguments(_ dir: URL) -> [String] { ["batch", dir.path, "--out-dir", out, "--state", state, "--jobs", "1"] + fast }
        let first = try RunningProcess(binary, arguments(one), environment: BatchTestCase.quietCI)
        let second = try RunningProcess(binary, arguments(two), environment: BatchTestCase.quietCI)
        for r in [try first.wait(timeout: 300), try second.wait(timeout: 300)] { XCTAssertEqual(r.status, 0, r.summary) }
        let jobs = try readJSON(URL(fileURLWithPath: state))["jobs"] as? [String: Any] ?? [:]
        XCTAssertEqual(Set(jobs.keys.map { URL(fileURLWithPath: $0).lastPathComponent }), ["a.mp4", "b.mp4", "c.mp4", "d.mp4"])
        // Every rerun recognises all its outputs (before: exit 80, "the state file does not know it").
        for dir in [one, two] {
            let rerun = try batch([dir.path, "--out-dir", out, "--state", state, "--report", scratch("r.json").path] + fast)
            XCTAssertEqual(rerun.status, 0, rerun.summary)
            XCTAssertEqual(Set(statuses(try readJSON(scratch("r.json"))).values), ["skipped"])
        }
        XCTAssertEqual(partialFiles(workDirectory), [])
    }

    func testOneFolderSpelledTwoWaysIsOneJob() throws {
        let input = try clips(["a.mp4"], in: "clips")
        let out = scratch("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: scratch("alias"), withDestinationURL: out)
        let state = scratch("state.json").path
        let first = try batch([input.path, "--out-dir", out.path, "--state", state] + fast)
        XCTAssertEqual(first.status, 0, first.summary)
        for spelling in [workDirectory.path + "/./out", workDirectory.path + "/out/", scratch("alias").path] {
            let again = try batch([input.path, "--out-dir", spelling, "--state", state, "--report", scratch("r.json").path] + fast)
            XCTAssertEqual(again.status, 0, again.summary)
            XCTAssertEqual(statuses(try readJSON(scratch("r.json"))), ["a.mp4": "skipped"], spelling)
        }
        XCTAssertEqual((try readJSON(URL(fileURLWithPath: state))["jobs"] as? [String: Any])?.count, 1)
    }

    func testStateFilesThisVersionCannotReadAreAClearError() throws {
        let input = try clips(["a.mp4"], in: "clips")
        let out = scratch("out").path
        let state = scratch("state.json")
        let good = try batch([input.path, "--out-dir", out, "--state", state.path] + fast)
        XCTAssertEqual(good.status, 0, good.summary)
        let original = try String(contentsOf: state, encoding: .utf8)
        XCTAssertTrue(original.contains("\"formatVersion\": 1"), original)

        try original.replacingOccurrences(of: "\"formatVersion\": 1", with: "\"formatVersion\": 99").write(to: state, atomically: true, encoding: .utf8)
        let future = try batch([input.path, "--out-dir", out, "--state", state.path] + fast)
        assertCleanFailure(future, exitCodes: [ExitCode.noInput], mentioning: [state.path, "formatVersion 99"])

        let malformed = original.replacingOccurrences(of: "\"inputSize\": ", with: "\"inputSize\": \"x\", \"was\": ")
        try malformed.write(to: state, atomically: true, encoding: .utf8)
        let broken = try batch([input.path, "--out-dir", out, "--state", state.path] + fast)
        assertCleanFailure(broken, exitCodes: [ExitCode.noInput], mentioning: [state.path, "malformed entry"])
        // The state file is left as it was for the user to look at.
        XCTAssertEqual(try String(contentsOf: state, encoding: .utf8), malformed)
    }

    /// Symlinks at the names the state and report temporaries used to have (`.NAME.PID.partial`,
    /// for the PIDs the run will likely get): the state, the report and the links' target are safe.
    func testPlantedSymlinksAtStateAndReportTemporariesAreNeverFollowed() throws {
        let input = try clips(["a.mp4"], in: "clips")
        let out = scratch("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let victim = scratch("victim.txt")
        try Data("precious\n".utf8).write(to: victim)
        let last = Int((try? String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? Int(getpid())
        var planted: [URL] = []
        for pid in (last + 1)...(last + 300) {
            planted.append(out.appendingPathComponent(".gpuencode-state.json.\(pid).partial"))
            planted.append(out.appendingPathComponent(".report.json.\(pid).partial"))
        }
        for link in planted { try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim) }
        let result = try batch([input.path, "--out-dir", out.path, "--report", out.appendingPathComponent("report.json").path] + fast)
        XCTAssertEqual(result.status, 0, result.summary)
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "precious\n")
        XCTAssertNotNil(try readJSON(out.appendingPathComponent(".gpuencode-state.json"))["jobs"])
        XCTAssertNotNil(try readJSON(out.appendingPathComponent("report.json"))["jobs"])
        for link in planted {
            XCTAssertEqual((try? FileManager.default.destinationOfSymbolicLink(atPath: link.path)), victim.path, link.lastPathComponent)
        }
    }
}
