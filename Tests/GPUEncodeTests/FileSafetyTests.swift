import CShim
import Foundation
@testable import GPUEncodeKit
@testable import GPUEncodeCore
import XCTest

// Issue 10, "Writing files": temporaries that cannot be redirected by a planted symlink, no silent
// replacement of a file another writer made, signals that leave nothing behind, temporaries of
// killed runs cleaned up, long names, a full disk, a thread that cannot start. Black-box through
// the binary where a user would see it; the C wrappers directly where only they can be forced.
final class FileSafetyTests: GPUEncodeTestCase {
    // MARK: - Fixtures

    /// A short clip with sound in its own folder, so the output folder's listing is only ours.
    private func makeInput(seconds: Double = 1, size: String = "320x240") throws -> URL {
        let dir = scratch("in")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("in.mp4")
        try Oracle.makeClip(file, seconds: seconds, size: size)
        return file
    }

    private func makeOutputFolder(_ name: String = "out") throws -> URL {
        let dir = scratch(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A file outside the output folder that a planted symlink points at; must stay as it is.
    private func makeVictim() throws -> URL {
        let victim = scratch("victim.txt")
        try Data("precious\n".utf8).write(to: victim)
        return victim
    }

    private func assertUntouched(_ victim: URL, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try String(contentsOf: victim, encoding: .utf8), "precious\n", "the symlink's target was written", file: file, line: line)
    }

    /// The PIDs the next processes will probably get (from the kernel's last PID): the names the
    /// old `.NAME.PID.partial` scheme would use, which an attacker fills with symlinks.
    private func likelyNextPIDs(_ count: Int = 300) -> [Int] {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8)) ?? ""
        let last = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? Int(getpid())
        return Array((last + 1)...(last + count))
    }

    private func isSymlink(_ url: URL) -> Bool {
        var st = stat()
        return lstat(url.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }

    private func isRegularFile(_ url: URL) -> Bool {
        var st = stat()
        return lstat(url.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    private func partials(_ dir: URL) -> [String] {
        listing(dir).filter { $0.hasSuffix(".partial") }.sorted()
    }

    /// A PID that no process has now: a child that has exited and been reaped.
    private func deadPID() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        let pid = p.processIdentifier
        guard kill(pid, 0) != 0 && errno == ESRCH else { throw XCTSkip("PID \(pid) was reused at once") }
        return pid
    }

    /// Starts a transcode that runs for a while and returns once its temporary exists (mid-run by
    /// construction, whatever the machine's speed); nil when it ended before that could be seen.
    private func startLongTranscode(into out: URL, extra: [String] = []) throws -> RunningProcess? {
        let input = try makeInput(seconds: 20, size: "640x360")
        let process = try Oracle.start(try Paths.gpuencode(), [input.path, out.appendingPathComponent("out.mp4").path,
                                                               "--preset", "sepia", "--x264-preset", "veryslow"] + extra)
        while partials(out).isEmpty {
            guard process.isRunning else {
                let result = try process.wait(timeout: 1)
                throw XCTSkip("the transcode ended before its temporary was seen (\(result.summary))")
            }
            usleep(5000)
        }
        return process
    }

    // MARK: - Temporaries and planted symlinks

    func testExclusiveCreateNeverFollowsAPlantedSymlink() throws {
        let victim = try makeVictim()
        let dir = try makeOutputFolder()
        let folder = gpuencode_open_directory(dir.path)
        XCTAssertGreaterThanOrEqual(folder, 0)
        defer { close(folder) }
        let link = dir.appendingPathComponent(".gpuencode-1-0123456789abcdef.partial")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
        XCTAssertEqual(gpuencode_create_exclusive_at(folder, link.lastPathComponent), -EEXIST)
        assertUntouched(victim)
        // A dangling link must not create its target either.
        let missing = scratch("not-there.txt")
        let dangling = dir.appendingPathComponent(".gpuencode-2-0123456789abcdef.partial")
        try FileManager.default.createSymbolicLink(at: dangling, withDestinationURL: missing)
        XCTAssertEqual(gpuencode_create_exclusive_at(folder, dangling.lastPathComponent), -EEXIST)
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing.path))
    }

    func testRenameWithoutReplaceKeepsTheFileThatIsThere() throws {
        let dir = try makeOutputFolder()
        let a = dir.appendingPathComponent("a"), b = dir.appendingPathComponent("b")
        try Data("new".utf8).write(to: a)
        try Data("theirs".utf8).write(to: b)
        let folder = gpuencode_open_directory(dir.path)
        XCTAssertGreaterThanOrEqual(folder, 0)
        defer { close(folder) }
        XCTAssertEqual(gpuencode_rename_noreplace_at(folder, "a", "b"), -EEXIST)
        XCTAssertEqual(try String(contentsOf: b, encoding: .utf8), "theirs")
        let c = dir.appendingPathComponent("c")
        XCTAssertEqual(gpuencode_rename_noreplace_at(folder, "a", "c"), 0)
        XCTAssertEqual(try String(contentsOf: c, encoding: .utf8), "new")
        XCTAssertFalse(FileManager.default.fileExists(atPath: a.path))
    }

    /// Symlinks at the old predictable names (for the PIDs the run will likely get) and at names of
    /// the new pattern: none is followed, none is replaced, the output is a regular file.
    func testPlantedSymlinksAtTemporaryNamesAreNeverFollowed() throws {
        let input = try makeInput()
        let victim = try makeVictim()
        let out = try makeOutputFolder()
        var planted: [URL] = []
        for pid in likelyNextPIDs() {
            planted.append(out.appendingPathComponent(".out.mp4.\(pid).partial"))
            planted.append(out.appendingPathComponent(".out.png.\(pid).partial"))
        }
        // Our own (live) PID in the new pattern: neither followed nor removed as stale.
        planted.append(out.appendingPathComponent(".gpuencode-\(getpid())-\(TemporaryFile.namespaceTag)-00000000000000ff.partial"))
        for link in planted { try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim) }

        let video = try gpuencode([input.path, out.appendingPathComponent("out.mp4").path, "--preset", "sepia", "--x264-preset", "ultrafast"])
        XCTAssertEqual(video.status, ExitCode.ok, video.summary)
        let picture = try gpuencode([input.path, out.appendingPathComponent("out.png").path, "--preset", "sepia"])
        XCTAssertEqual(picture.status, ExitCode.ok, picture.summary)

        assertUntouched(victim)
        XCTAssertTrue(isRegularFile(out.appendingPathComponent("out.mp4")))
        XCTAssertTrue(isRegularFile(out.appendingPathComponent("out.png")))
        XCTAssertEqual(try Oracle.streams(out.appendingPathComponent("out.mp4")).first?.codecName, "h264")
        for link in planted { XCTAssertTrue(isSymlink(link), "\(link.lastPathComponent) was replaced or removed") }
        XCTAssertEqual(listing(out).count, planted.count + 2)
    }

    // MARK: - Two writers

    func testTwoWritersOfOneOutputExactlyOneWins() throws {
        let input = try makeInput(seconds: 2)
        let out = try makeOutputFolder()
        let target = out.appendingPathComponent("out.mp4").path
        let binary = try Paths.gpuencode()
        let first = try Oracle.start(binary, [input.path, target, "--preset", "sepia", "--x264-preset", "ultrafast"])
        let second = try Oracle.start(binary, [input.path, target, "--preset", "grayscale", "--x264-preset", "ultrafast"])
        let results = [try first.wait(timeout: 300), try second.wait(timeout: 300)]
        // Whichever finishes second (or starts after the first finished) loses: never both 0.
        XCTAssertEqual(results.map(\.status).sorted(), [ExitCode.ok, ExitCode.cannotCreate], results.map(\.summary).joined(separator: " | "))
        let loser = results.first { $0.status == ExitCode.cannotCreate }
        XCTAssertEqual(loser?.stderrLines.count, 1, loser?.summary ?? "")
        XCTAssertTrue(loser?.stderr.contains("out.mp4") == true)
        XCTAssertEqual(listing(out), ["out.mp4"], "a temporary was left")
        let streams = try Oracle.streams(URL(fileURLWithPath: target))
        XCTAssertEqual(streams.first?.codecName, "h264")
        XCTAssertEqual(try Oracle.frameTimes(URL(fileURLWithPath: target)).count, 50, "the winner's file does not play through")
    }

    /// The last step of every writer, raced deterministically: a file that appears at the name
    /// after the temporary was written is kept; the writer fails with 73 and removes its temporary.
    func testCommitLosesToAFileThatAppearedAndLeavesNothing() throws {
        let out = try makeOutputFolder()
        let target = out.appendingPathComponent("report.json").path
        let temp = try TemporaryFile(in: out.path, for: target)
        XCTAssertEqual(write(temp.fd, "ours", 4), 4)
        XCTAssertTrue(temp.close())
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: target))
        XCTAssertThrowsError(try temp.commit(to: target, overwrite: false)) { error in
            XCTAssertEqual((error as? GPUEncodeError)?.exitCode, ExitCode.cannotCreate)
        }
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "theirs")
        XCTAssertEqual(listing(out), ["report.json"])
        // With overwrite (-y) the finished file replaces it, as rename(2) does.
        let again = try TemporaryFile(in: out.path, for: target)
        XCTAssertEqual(write(again.fd, "ours", 4), 4)
        XCTAssertTrue(again.close())
        try again.commit(to: target, overwrite: true)
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "ours")
        XCTAssertEqual(listing(out), ["report.json"])
    }

    /// Pictures: an existing file is refused without -y (73, nothing left) and replaced with it.
    func testPictureWriterRefusesAnExistingFileWithoutOverwrite() throws {
        let out = try makeOutputFolder()
        let target = out.appendingPathComponent("lut.png").path
        let first = try gpuencode(["lut", "identity", target])
        XCTAssertEqual(first.status, ExitCode.ok, first.summary)
        let second = try gpuencode(["lut", "identity", target])
        assertCleanFailure(second, exitCodes: [ExitCode.cannotCreate], mentioning: [target], outputDirectory: out, before: ["lut.png"])
        let forced = try gpuencode(["lut", "identity", target, "-y"])
        XCTAssertEqual(forced.status, ExitCode.ok, forced.summary)
        XCTAssertEqual(listing(out), ["lut.png"])
    }

    // MARK: - Signals

    func testSIGHUPMidRunLeavesNothing() throws { try signalMidRun(SIGHUP) }
    func testSIGPIPEMidRunLeavesNothing() throws { try signalMidRun(SIGPIPE) }
    func testSIGXFSZMidRunLeavesNothing() throws { try signalMidRun(SIGXFSZ) }

    private func signalMidRun(_ signal: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        let out = try makeOutputFolder()
        guard let process = try startLongTranscode(into: out) else { return }
        process.send(signal)
        let result = try process.wait(timeout: 120)
        XCTAssertFalse(result.signalled, "died of the signal instead of handling it: \(result.summary)", file: file, line: line)
        XCTAssertEqual(result.status, 128 + signal, result.summary, file: file, line: line)
        XCTAssertEqual(result.stderrLines.count, 1, result.summary, file: file, line: line)
        XCTAssertEqual(listing(out), [], "the interrupted run left files behind", file: file, line: line)
    }

    /// A real file-size limit (RLIMIT_FSIZE) rather than a sent signal: SIGXFSZ, then EFBIG.
    func testFileSizeLimitExits153WithNothingLeft() throws {
        let input = try makeInput(seconds: 2)
        let out = try makeOutputFolder()
        let binary = try Paths.gpuencode()
        let script = "ulimit -f 16 && exec \"$0\" \"$1\" \"$2\" --x264-preset ultrafast --crf 0"
        let result = try Oracle.run("/bin/sh", ["-c", script, binary, input.path, out.appendingPathComponent("out.mp4").path])
        XCTAssertEqual(result.status, 128 + SIGXFSZ, result.summary)
        XCTAssertEqual(result.stderrLines.count, 1, result.summary)
        XCTAssertEqual(listing(out), [], "the run left files behind")
    }

    // MARK: - Stale temporaries

    func testStaleTemporariesOfDeadRunsAreRemovedOthersKept() throws {
        let input = try makeInput()
        let out = try makeOutputFolder()
        let victim = try makeVictim()
        let dead = try deadPID()
        let tag = TemporaryFile.namespaceTag
        let otherTag = tag == "00000000" ? "11111111" : "00000000"
        let stale = [".gpuencode-\(dead)-\(tag)-0123456789abcdef.partial", ".out.mp4.\(dead).partial"]
        let kept = [
            ".gpuencode-\(getpid())-\(tag)-0123456789abcdef.partial",  // a live run's
            ".gpuencode-\(dead)-\(otherTag)-0123456789abcdef.partial", // another PID namespace's: its PIDs are not ours to judge
            ".gpuencode-\(dead)-\(tag)-0123456789ABCDEF.partial",      // not exactly our pattern
            ".gpuencode-\(dead)-\(tag)-0123.partial",
            ".gpuencode-\(dead)-0123456789abcdef.partial",
            ".other.mp4.\(dead).partial",                               // another output's old-style name
            "gpuencode-\(dead)-\(tag)-0123456789abcdef.partial",
            ".out.mp4.\(try deadPID()).partial",                        // old-style, but written recently
        ]
        for name in stale + kept { try Data("x".utf8).write(to: out.appendingPathComponent(name)) }
        // The old-style name carries no namespace: it goes only after an hour without a write.
        let hoursAgo = Date(timeIntervalSinceNow: -7200)
        try FileManager.default.setAttributes([.modificationDate: hoursAgo], ofItemAtPath: out.appendingPathComponent(stale[1]).path)
        // A link with a stale-looking name is not a regular file: left alone, never followed.
        let link = out.appendingPathComponent(".gpuencode-\(dead)-\(tag)-fedcba9876543210.partial")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)

        let result = try gpuencode([input.path, out.appendingPathComponent("out.mp4").path, "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertEqual(listing(out), Set(kept + ["out.mp4", link.lastPathComponent]))
        XCTAssertTrue(isSymlink(link))
        assertUntouched(victim)
    }

    func testStaleTemporaryRemovedByAPictureWrite() throws {
        let out = try makeOutputFolder()
        let dead = try deadPID()
        let stale = ".gpuencode-\(dead)-\(TemporaryFile.namespaceTag)-00000000deadbeef.partial"
        try Data("x".utf8).write(to: out.appendingPathComponent(stale))
        let result = try gpuencode(["lut", "identity", out.appendingPathComponent("lut.png").path])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        XCTAssertEqual(listing(out), ["lut.png"])
    }

    // MARK: - Long names

    /// Swift would turn a name that is not UTF-8 into another (U+FFFD for the bad byte), so the output
    /// would appear under a name nobody asked for: refused with 64 and nothing written. Run through
    /// sh because Foundation's Process takes only Strings.
    func testNamesThatAreNotUTF8AreRefusedNotRenamed() throws {
        let input = try makeInput(seconds: 0.2, size: "64x48")
        let out = scratch("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let script = "cd '\(out.path)' && exec '\(try Paths.gpuencode())' '\(input.path)' \"$(printf 'bad\\377.mp4')\""
        let result = try Oracle.run("/bin/sh", ["-c", script], timeout: 60)
        assertCleanFailure(result, exitCodes: [ExitCode.usage], mentioning: ["not valid UTF-8"], outputDirectory: out, before: [])
    }

    func testOutputNamesOfNAMEMAXBytesWork() throws {
        let input = try makeInput()
        let out = try makeOutputFolder()
        let video = String(repeating: "v", count: 255 - 4) + ".mp4"
        let picture = String(repeating: "p", count: 255 - 4) + ".png"
        XCTAssertEqual(video.utf8.count, 255)
        let r1 = try gpuencode([input.path, out.appendingPathComponent(video).path, "--x264-preset", "ultrafast"])
        XCTAssertEqual(r1.status, ExitCode.ok, r1.summary)
        let r2 = try gpuencode(["lut", "identity", out.appendingPathComponent(picture).path])
        XCTAssertEqual(r2.status, ExitCode.ok, r2.summary)
        XCTAssertEqual(listing(out), [video, picture])
        XCTAssertEqual(try Oracle.streams(out.appendingPathComponent(video)).first?.codecName, "h264")
    }

    // MARK: - Full disk

    func testFullDiskOnASmallTmpfsExits74WithNothingLeft() throws {
        let input = try makeInput(seconds: 4, size: "640x480")
        let mountPoint = try makeOutputFolder("small")
        let mounted = try Oracle.run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint.path])
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mounted.summary))") }
        defer { _ = try? Oracle.run("umount", [mountPoint.path]) }
        // Lossless 640x480 testsrc2 for 4 s is far more than 1 MiB.
        let result = try gpuencode([input.path, mountPoint.appendingPathComponent("out.mp4").path, "--x264-preset", "ultrafast", "--crf", "0"])
        assertCleanFailure(result, exitCodes: [ExitCode.ioError], mentioning: ["out.mp4"], outputDirectory: mountPoint)
    }

    // MARK: - Threads

    func testAThreadThatCannotStartIsAnErrorNotATrap() throws {
        // A stack larger than the address space: pthread_create fails (EAGAIN/ENOMEM/EINVAL) on
        // any machine, as it does when the thread limit (ulimit -u) is reached.
        XCTAssertThrowsError(try WorkerThread(name: "too-big", stackSize: 1 << 60) {}) { error in
            let e = error as? GPUEncodeError
            XCTAssertNotNil(e)
            XCTAssertTrue(e?.message.contains("cannot start a thread") == true, "\(error)")
            XCTAssertFalse(e?.description.contains("\n") ?? true)
            XCTAssertEqual(e?.exitCode, 71, "EX_OSERR: the system refused a resource")
        }
    }
}
