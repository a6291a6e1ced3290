import Foundation
import XCTest

/// Each failure must end with its documented exit code, one stderr line naming the culprit, and no
/// output or temporary file left behind.
final class ErrorTests: GPUEncodeTestCase {
    // MARK: - Input

    func testMissingInput() throws {
        let input = scratch("does-not-exist.mp4")
        try expectFailure([input.path, scratch("out.mp4").path], exitCode: ExitCode.noInput, mentioning: [input.path])
    }

    func testInputThatIsNotMedia() throws {
        let input = scratch("notvideo.mp4")
        try Data("hello\n".utf8).write(to: input)
        try expectFailure([input.path, scratch("out.mp4").path], exitCode: ExitCode.noInput, mentioning: [input.path])
    }

    func testInputWithoutVideo() throws {
        let input = try Paths.media("aac_audio_only.mp4")
        try expectFailure([input.path, scratch("out.mp4").path], exitCode: ExitCode.noInput, mentioning: [input.path])
    }

    // MARK: - Presets

    func testUnknownBuiltinPreset() throws {
        try expectFailure([try makeInput().path, scratch("out.mp4").path, "--preset", "no-such-preset"],
                          exitCode: ExitCode.badPreset, mentioning: ["no-such-preset"])
    }

    func testPresetWithUnknownFilter() throws {
        let preset = try writePreset(#"{"version":1,"name":"x","filters":[{"filter":"no-such-filter"}]}"#)
        try expectFailure([try makeInput().path, scratch("out.mp4").path, "--preset", preset.path],
                          exitCode: ExitCode.badPreset, mentioning: [preset.path])
    }

    func testPresetWithUnknownParameter() throws {
        let preset = try writePreset(#"{"version":1,"name":"x","filters":[{"filter":"sepia","no_such_parameter":1}]}"#)
        try expectFailure([try makeInput().path, scratch("out.mp4").path, "--preset", preset.path],
                          exitCode: ExitCode.badPreset, mentioning: [preset.path, "no_such_parameter"])
    }

    func testPresetWithWrongType() throws {
        let preset = try writePreset(#"{"version":1,"name":"x","filters":[{"filter":"sepia","intensity":"strong"}]}"#)
        try expectFailure([try makeInput().path, scratch("out.mp4").path, "--preset", preset.path],
                          exitCode: ExitCode.badPreset, mentioning: [preset.path, "filters[0].intensity"])
    }

    func testPresetWithOutOfRangeValue() throws {
        let preset = try writePreset(#"{"version":1,"name":"x","filters":[{"filter":"sepia","intensity":7}]}"#)
        try expectFailure([try makeInput().path, scratch("out.mp4").path, "--preset", preset.path],
                          exitCode: ExitCode.badPreset, mentioning: [preset.path, "filters[0].intensity"])
    }

    // MARK: - Usage

    func testUnknownFlag() throws {
        try expectFailure([try makeInput().path, scratch("out.mp4").path, "--no-such-flag"],
                          exitCode: ExitCode.usage, mentioning: ["--no-such-flag"])
    }

    func testOutputSameAsInput() throws {
        let input = try makeInput()
        let hash = try Oracle.sha256(input)
        try expectFailure([input.path, input.path, "-y"], exitCode: ExitCode.usage, mentioning: [input.path])
        XCTAssertEqual(try Oracle.sha256(input), hash, "the input was overwritten")
    }

    // Comparing path strings is not enough: "-y" would then let the program truncate its own input.
    func testOutputSameFileAsInputSpelledDifferently() throws {
        let input = try makeInput()
        let hash = try Oracle.sha256(input)
        let sameFile = workDirectory.appendingPathComponent(".").path + "/" + input.lastPathComponent
        try expectFailure([input.path, sameFile, "-y"], exitCode: ExitCode.usage, mentioning: [input.lastPathComponent])
        XCTAssertEqual(try Oracle.sha256(input), hash, "the input was overwritten")
    }

    // MARK: - Output

    func testExistingOutputWithoutOverwriteFlag() throws {
        let input = try makeInput()
        let output = scratch("out.mp4")
        let placeholder = Data("keep me\n".utf8)
        try placeholder.write(to: output)
        try expectFailure([input.path, output.path], exitCode: ExitCode.cannotCreate, mentioning: [output.path])
        XCTAssertEqual(FileManager.default.contents(atPath: output.path), placeholder, "the existing output was changed")
    }

    func testExistingOutputWithOverwriteFlag() throws {
        let input = try makeInput()
        let output = scratch("out.mp4")
        try Data("replace me\n".utf8).write(to: output)
        let result = try gpuencode([input.path, output.path, "-y", "--x264-preset", "ultrafast"])
        XCTAssertEqual(result.status, ExitCode.ok, result.summary)
        let video = try Oracle.streams(output).first { $0.codecType == "video" }
        XCTAssertEqual(video?.codecName, "h264", "the placeholder was not replaced by a video")
        XCTAssertEqual(listing(workDirectory), ["in.mp4", "out.mp4"], "temporary files left behind")
    }

    func testOutputDirectoryMissing() throws {
        let input = try makeInput()
        let missing = scratch("no-such-dir")
        let output = missing.appendingPathComponent("out.mp4")
        try expectFailure([input.path, output.path], exitCode: ExitCode.cannotCreate, mentioning: [output.path])
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing.path), "the output directory was created")
    }

    func testOutputDirectoryNotWritable() throws {
        let input = try makeInput()
        let directory = scratch("read-only")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        chmod(directory.path, 0o555)
        if access(directory.path, W_OK) == 0 {
            // Root ignores permission bits (as here and in CI); nothing can be created in /proc, even by root.
            let output = URL(fileURLWithPath: "/proc/gpuencode-test-out.mp4")
            // /proc's listing changes with every process started meanwhile, so only the output itself is checked.
            let result = try gpuencode([input.path, output.path])
            assertCleanFailure(result, exitCodes: [ExitCode.cannotCreate], mentioning: [output.path])
            XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
        } else {
            try expectFailure([input.path, directory.appendingPathComponent("out.mp4").path], in: directory,
                              exitCode: ExitCode.cannotCreate, mentioning: [directory.appendingPathComponent("out.mp4").path])
        }
    }

    // MARK: - Signals

    func testInterruptedBySIGINT() throws {
        try interrupt(with: SIGINT, expecting: ExitCode.interrupted)
    }

    func testTerminatedBySIGTERM() throws {
        try interrupt(with: SIGTERM, expecting: ExitCode.terminated)
    }

    // MARK: - Helpers

    /// A 1 s synthetic clip with sound: errors should be found fast, not after a long transcode.
    private func makeInput() throws -> URL {
        let file = scratch("in.mp4")
        try Oracle.makeClip(file)
        return file
    }

    private func writePreset(_ json: String) throws -> URL {
        let file = scratch("preset.json")
        try Data(json.utf8).write(to: file)
        return file
    }

    /// Runs gpuencode expecting `exitCode`; `directory` is where the output would have gone.
    private func expectFailure(_ arguments: [String], in directory: URL? = nil, exitCode: Int32, mentioning culprits: [String],
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let outputDirectory = directory ?? workDirectory!
        let before = listing(outputDirectory)
        let result = try gpuencode(arguments)
        assertCleanFailure(result, exitCodes: [exitCode], mentioning: culprits,
                           outputDirectory: outputDirectory, before: before, file: file, line: line)
    }

    /// The 30 s clip takes far longer than the grace period to transcode, so the signal arrives mid-encode,
    /// with a partial output open.
    private func interrupt(with signal: Int32, expecting exitCode: Int32) throws {
        let input = try Paths.media("vp8_vorbis_720p_bbb_30s.webm")
        let process = try Oracle.start(try Paths.gpuencode(), [input.path, scratch("out.mkv").path, "--x264-preset", "ultrafast"])
        Thread.sleep(forTimeInterval: 1.5)
        guard process.isRunning else {
            let result = try process.wait(timeout: 1)
            throw XCTSkip("the transcode ended within 1.5 s (\(result.summary)), too soon to interrupt")
        }
        process.send(signal)
        let result = try process.wait(timeout: 60)
        XCTAssertFalse(result.signalled, "died of the signal instead of handling it: \(result.summary)")
        XCTAssertEqual(result.status, exitCode, result.summary)
        XCTAssertEqual(listing(workDirectory), [], "an interrupted transcode left files behind")
    }
}
