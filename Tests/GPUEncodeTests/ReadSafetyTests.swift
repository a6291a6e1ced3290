import Foundation
import GPUEncodeKit
import XCTest

/// What gpuencode reads: presets only reach files under their own folder or an --allow-path one;
/// every file is a regular file read within a cap (no hang on a FIFO, no endless /dev/zero); inputs
/// are local files, never URLs, and text is not media. Timeouts here only guard against hangs.
final class ReadSafetyTests: GPUEncodeTestCase {
    // Presets load in this process: their pictures and movies decode through the FFmpeg decoder
    // the command line installs at start.
    override class func setUp() {
        super.setUp()
        FilterMedia.install(FFmpegFilterMedia())
    }

    /// A hang guard, far above what any of these runs takes.
    let guardTimeout: TimeInterval = 60

    // MARK: - Fixtures

    /// `root/presets` (where presets go) and `root/outside` (a sibling folder they must not reach).
    var presets: URL { scratch("presets") }
    var outside: URL { scratch("outside") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(at: presets, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
    }

    func write(_ text: String, to url: URL) throws { try Data(text.utf8).write(to: url) }

    func preset(_ filters: String, name: String = "p.json") throws -> URL {
        let url = presets.appendingPathComponent(name)
        try write(#"{"version": 1, "name": "p", "filters": [\#(filters)]}"#, to: url)
        return url
    }

    static let cube = "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"

    /// A Photoshop curves file: version 1, one curve of two points (0,0) and (255,255).
    static let acv = Data([0, 1, 0, 1, 0, 2, 0, 0, 0, 0, 0, 255, 0, 255])

    static let shader = "void main() { gl_FragColor = texture2D(inputImageTexture, textureCoordinate); }\n"

    /// Each kind of reference a preset makes, as (the file's name, how to write it, the preset's
    /// filter list or top-level members naming PATH).
    func references() -> [(file: String, make: (URL) throws -> Void, json: (String) -> String)] {
        let filters = { (f: String) in { (p: String) in #"{"version": 1, "name": "p", "filters": [\#(f.replacingOccurrences(of: "PATH", with: p))]}"# } }
        return [
            ("look.cube", { try self.write(Self.cube, to: $0) }, filters(#"{"filter": "lut3d", "file": "PATH"}"#)),
            ("lookup.png", { try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=gray:s=512x512",
                                                               "-frames:v", "1", $0.path]) },
             filters(#"{"filter": "lookup", "image": "PATH"}"#)),
            ("curve.acv", { try Self.acv.write(to: $0) }, filters(#"{"filter": "toneCurve", "acv": "PATH"}"#)),
            ("fx.frag", { try self.write(Self.shader, to: $0) }, filters(#"{"filter": "shader", "file": "PATH"}"#)),
            ("clip.mp4", { try Oracle.makeClip($0, seconds: 0.2, size: "64x48", audio: false) }, filters(#"{"filter": "video", "file": "PATH"}"#)),
            ("parent.json", { try self.write(#"{"version": 1, "name": "parent", "filters": [{"filter": "sepia"}]}"#, to: $0) },
             { p in #"{"version": 1, "name": "p", "extends": "\#(p)"}"# }),
        ]
    }

    /// `presets show` loads (and checks) a preset without a GPU.
    func show(_ preset: URL, _ extra: [String] = []) throws -> ProcessResult {
        try gpuencode(["presets", "show", preset.path] + extra, timeout: guardTimeout)
    }

    func assertRefused(_ result: ProcessResult, code: Int32 = ExitCode.badPreset, mentioning: [String],
                       file: StaticString = #filePath, line: UInt = #line) {
        assertCleanFailure(result, exitCodes: [code], mentioning: mentioning, file: file, line: line)
    }

    // MARK: - Containment

    func testEveryReferenceKindIsContainedToThePresetFolder() throws {
        for ref in references() {
            let target = outside.appendingPathComponent(ref.file)
            try ref.make(target)
            let link = presets.appendingPathComponent("link-" + ref.file)
            try? FileManager.default.removeItem(at: link)
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../outside/" + ref.file)
            let url = presets.appendingPathComponent("p.json")
            for (how, path) in [("dot-dot", "../outside/\(ref.file)"), ("symlink", "link-\(ref.file)"), ("absolute", target.path)] {
                try write(ref.json(path), to: url)
                let refused = try show(url)
                XCTAssertEqual(refused.status, ExitCode.badPreset, "\(ref.file) by \(how): \(refused.summary)")
                XCTAssertEqual(refused.stderrLines.count, 1, "\(ref.file) by \(how): \(refused.stderrLines)")
                XCTAssertTrue(refused.stderr.contains("outside the preset's folder") && refused.stderr.contains("--allow-path"),
                              "\(ref.file) by \(how): \(refused.stderr)")
                let allowed = try show(url, ["--allow-path", outside.path])
                XCTAssertEqual(allowed.status, 0, "\(ref.file) by \(how) with --allow-path: \(allowed.summary)")
            }
        }
    }

    /// A file that does not exist outside the folder is "outside" too, not "no such file": the
    /// message must not tell a preset which files exist elsewhere.
    func testMissingFilesOutsideAreRefusedAsOutsideNotProbed() throws {
        for ref in ["../nowhere/missing.cube", "/etc/gpuencode-missing.cube"] {
            let url = try preset("{\"filter\": \"lut3d\", \"file\": \"\(ref)\"}")
            let result = try show(url)
            assertRefused(result, mentioning: ["outside the preset's folder"])
            XCTAssertFalse(result.stderr.contains("no such file"), result.stderr)
        }
        let inside = try preset(#"{"filter": "lut3d", "file": "missing.cube"}"#)
        assertRefused(try show(inside), mentioning: ["no such file"])
    }

    func testFilesInsideThePresetFolderNeedNoFlag() throws {
        try write(Self.cube, to: presets.appendingPathComponent("in.cube"))
        try FileManager.default.createDirectory(at: presets.appendingPathComponent("luts"), withIntermediateDirectories: true)
        try write(Self.cube, to: presets.appendingPathComponent("luts/sub.cube"))
        let url = try preset(#"{"filter": "lut3d", "file": "in.cube"}, {"filter": "lut3d", "file": "luts/../luts/sub.cube"}"#)
        XCTAssertEqual(try show(url).status, 0)
    }

    func testTranscodeRefusesAnEscapeWithOneLine() throws {
        try write(Self.cube, to: outside.appendingPathComponent("outside.cube"))
        let url = try preset(#"{"filter": "lut3d", "file": "../outside/outside.cube"}"#)
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2, size: "64x48", audio: false)
        let before = listing(workDirectory)
        let result = try gpuencode([input.path, scratch("out.mp4").path, "--preset", url.path], timeout: guardTimeout)
        assertCleanFailure(result, exitCodes: [ExitCode.badPreset], mentioning: ["../outside/outside.cube"],
                           outputDirectory: workDirectory, before: before)
    }

    func testAllowPathIsTakenByEveryPresetCommand() throws {
        try write(Self.cube, to: outside.appendingPathComponent("outside.cube"))
        let url = try preset(#"{"filter": "lut3d", "file": "../outside/outside.cube"}"#)
        let refused = try gpuencode(["validate", url.path], timeout: guardTimeout)
        XCTAssertEqual(refused.status, ExitCode.badPreset, refused.summary)
        let allowed = try gpuencode(["validate", "--allow-path", outside.path, url.path], timeout: guardTimeout)
        XCTAssertEqual(allowed.status, 0, allowed.summary)
        // A missing --allow-path folder is a usage error.
        let missing = try show(url, ["--allow-path", scratch("nope").path])
        assertRefused(missing, code: ExitCode.usage, mentioning: ["nope"])
        for command in [["--help"], ["preview", "--help"], ["contact-sheet", "--help"], ["batch", "--help"], ["validate", "--help"],
                        ["presets", "show", "--help"], ["presets", "list", "--help"]] {
            let help = try gpuencode(command, timeout: guardTimeout)
            XCTAssertTrue(help.stdout.contains("--allow-path"), "\(command.joined(separator: " ")) lacks --allow-path")
        }
    }

    func testBatchChecksPresetsFromTheManifestAndTakesAllowPath() throws {
        try write(Self.cube, to: outside.appendingPathComponent("outside.cube"))
        let url = try preset(#"{"filter": "lut3d", "file": "../outside/outside.cube"}"#)
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2, size: "64x48", audio: false)
        let manifest = scratch("jobs.csv")
        try write("input,preset\n\(input.path),\(url.path)\n", to: manifest)
        let refused = try gpuencode(["batch", "--manifest", manifest.path, "--out-dir", scratch("out").path, "--dry-run"], timeout: guardTimeout)
        assertRefused(refused, mentioning: ["outside the preset's folder"])
        let allowed = try gpuencode(["batch", "--manifest", manifest.path, "--out-dir", scratch("out").path, "--dry-run",
                                     "--allow-path", outside.path], timeout: guardTimeout)
        XCTAssertEqual(allowed.status, 0, allowed.summary)
    }

    func testPreviewAndContactSheetRefuseAnEscapeAndTakeAllowPath() throws {
        try write(Self.cube, to: outside.appendingPathComponent("outside.cube"))
        let url = try preset(#"{"filter": "lut3d", "file": "../outside/outside.cube"}"#)
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2, size: "64x48", audio: false)
        for command in [["preview", input.path, "--preset", url.path, "-o", scratch("p.png").path],
                        ["contact-sheet", input.path, "--presets", "identity,\(url.path)", "-o", scratch("c.png").path]] {
            let before = listing(workDirectory)
            assertCleanFailure(try gpuencode(command, timeout: guardTimeout), exitCodes: [ExitCode.badPreset],
                               mentioning: ["outside the preset's folder"], outputDirectory: workDirectory, before: before)
            let allowed = try gpuencode(command + ["--allow-path", outside.path], timeout: guardTimeout)
            XCTAssertEqual(allowed.status, 0, "\(command[0]): \(allowed.summary)")
        }
    }

    func testBuiltinPresetsReadOnlyTheirEmbeddedFiles() throws {
        // A child may extend a built-in and still read its own files.
        try write(Self.cube, to: presets.appendingPathComponent("in.cube"))
        let url = presets.appendingPathComponent("child.json")
        try write(#"{"version": 1, "name": "c", "extends": "amatorka", "filters": [{"filter": "lut3d", "file": "in.cube"}]}"#, to: url)
        XCTAssertEqual(try show(url).status, 0)
    }

    // MARK: - Regular files only

    func testFifoDeviceAndDirectoryAsPresetLutAndStateFailFast() throws {
        let fifo = scratch("fifo.json")
        XCTAssertEqual(mkfifo(fifo.path, 0o644), 0)
        let input = scratch("in.mp4")
        try Oracle.makeClip(input, seconds: 0.2, size: "64x48", audio: false)
        for bad in [fifo.path, "/dev/zero", outside.path] {
            // As a preset.
            let asPreset = try gpuencode(["presets", "show", bad], timeout: guardTimeout)
            assertRefused(asPreset, mentioning: ["not a regular file"])
            // As a LUT: a link named .cube in the preset's folder, allowed by --allow-path, so only
            // the file's type stops it.
            let lut = presets.appendingPathComponent("bad.cube")
            try? FileManager.default.removeItem(at: lut)
            try FileManager.default.createSymbolicLink(atPath: lut.path, withDestinationPath: bad)
            let url = try preset(#"{"filter": "lut3d", "file": "bad.cube"}"#)
            assertRefused(try show(url, ["--allow-path", "/"]), mentioning: ["not a regular file"])
            // As a batch state file, and as a report to merge.
            let asState = try gpuencode(["batch", input.path, "--out-dir", scratch("out").path, "--state", bad], timeout: guardTimeout)
            assertCleanFailure(asState, exitCodes: [ExitCode.noInput], mentioning: ["not a regular file"])
            let asReport = try gpuencode(["report", "merge", bad, "-o", scratch("merged.json").path], timeout: guardTimeout)
            assertCleanFailure(asReport, exitCodes: [ExitCode.noInput], mentioning: ["not a regular file"])
        }
    }

    func testSparseCubeClaimingAHugeTableFailsAtTheHeaderWithLittleMemory() throws {
        for header in ["LUT_3D_SIZE 1024", "LUT_3D_SIZE 256"] {
            let cube = presets.appendingPathComponent("sparse.cube")
            try write(header + "\n", to: cube)
            XCTAssertEqual(truncate(cube.path, 1_000_000_000), 0)
            let url = try preset(#"{"filter": "lut3d", "file": "sparse.cube"}"#)
            // Under a 1 GiB address-space limit: reading the file whole (as before) cannot fit.
            let result = try Oracle.run("/bin/sh", ["-c", "ulimit -v 1048576; exec \"$0\" presets show \"$1\"", try Paths.gpuencode(), url.path],
                                        timeout: guardTimeout)
            assertRefused(result, mentioning: ["sparse.cube", "line"])
        }
    }

    /// The streamed parse (a chunk at a time) reads a table that spans many chunks exactly as the
    /// whole-buffer parse does: CRLF rows, comments, a long title, no newline at the end.
    func testStreamedCubeParseMatchesTheWholeFileParse() throws {
        var text = "TITLE \"" + String(repeating: "t", count: 40_000) + "\"\r\n# a comment\r\nLUT_1D_SIZE 1024\r\nLUT_3D_SIZE 65\r\n"
        let rows = 1024 + 65 * 65 * 65
        var lines: [String] = []
        lines.reserveCapacity(rows)
        for i in 0..<rows {
            let v = { (k: Int) in String(format: "%.6f", Double((i * k) % 1_000_003) / 1_000_003) }
            lines.append("\(v(7)) \(v(13)) \(v(31))" + (i % 1000 == 0 ? " # row \(i)" : ""))
        }
        text += lines.joined(separator: "\r\n")
        let bytes = Array(text.utf8)
        XCTAssertGreaterThan(bytes.count, 4 << 20, "the table must span several 1 MiB chunks")
        let file = presets.appendingPathComponent("big.cube")
        try Data(bytes).write(to: file)
        let whole = try CubeFile.parse(bytes)
        let declaration = try XCTUnwrap(FilterRegistry.named("lut3d"))
        let instance = try FilterInstance(declaration, values: ["file": .string("big.cube")],
                                          context: ResourceContext(baseDirectory: presets.path)).prepared()
        guard case .table3D(let size, let data)? = instance.resources?["table"] else {
            return XCTFail("no 3D table: \(String(describing: instance.resources?.keys))")
        }
        XCTAssertEqual(size, 65)
        XCTAssertEqual(whole.size1D, 1024)
        // Against the values written, not only parser against parser: every row of both tables, in
        // file order (RGB then an alpha of 1), across the chunk boundaries.
        func expected(_ i: Int, _ k: Int) -> Float { Float(String(format: "%.6f", Double((i * k) % 1_000_003) / 1_000_003))! }
        XCTAssertEqual(whole.table1D.count, 1024 * 4)
        XCTAssertEqual(data.count, 65 * 65 * 65 * 4)
        var mismatches = 0
        for i in 0..<rows {
            let row = i < 1024 ? Array(whole.table1D[(4 * i)..<(4 * i + 4)]) : Array(data[(4 * (i - 1024))..<(4 * (i - 1024) + 4)])
            if row != [expected(i, 7), expected(i, 13), expected(i, 31), 1] { mismatches += 1 }
        }
        XCTAssertEqual(mismatches, 0, "rows that differ from the file")
        XCTAssertEqual(data, whole.table3D)
    }

    func testCubeTooSmallForItsTableIsRefusedBeforeAllocating() throws {
        try write("LUT_3D_SIZE 256\n0 0 0\n", to: presets.appendingPathComponent("short.cube"))
        let url = try preset(#"{"filter": "lut3d", "file": "short.cube"}"#)
        assertRefused(try show(url), mentioning: ["16777216 table rows"])
    }

    func testImageClaimingHugeDimensionsIsRefusedFromItsHeader() throws {
        // A PNG signature and an IHDR claiming 100000 x 100000.
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
        png += Data([0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0, 0, 0, 0, 0])
        try png.write(to: presets.appendingPathComponent("huge.png"))
        let url = try preset(#"{"filter": "lookup", "image": "huge.png"}"#)
        assertRefused(try show(url), mentioning: ["100000x100000"])
    }

    // MARK: - Inputs are files

    /// Runs gpuencode in `directory` (for names that mean something to FFmpeg only when relative).
    func gpuencode(in directory: URL, _ arguments: [String]) throws -> ProcessResult {
        try Oracle.run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", directory.path, try Paths.gpuencode()] + arguments,
                       timeout: guardTimeout)
    }

    func testInputNamedLikeTheConcatProtocolIsReadAsThatFile() throws {
        let dir = scratch("concat")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Oracle.makeClip(dir.appendingPathComponent("a.mp4"), seconds: 0.4, size: "64x48", rate: 25, audio: false)
        try Oracle.makeClip(dir.appendingPathComponent("b.mp4"), seconds: 0.2, size: "64x48", rate: 25, audio: false)
        try FileManager.default.copyItem(at: dir.appendingPathComponent("b.mp4"), to: dir.appendingPathComponent("concat:a.mp4|b.mp4"))
        let result = try gpuencode(in: dir, ["concat:a.mp4|b.mp4", "out.mp4"])
        XCTAssertEqual(result.status, 0, result.summary)
        // b's 5 frames, not a's 10 and b's 5 through the concat protocol.
        let count = try Oracle.runChecked("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                                      "stream=nb_read_frames", "-of", "csv=p=0", dir.appendingPathComponent("out.mp4").path])
        XCTAssertEqual(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "5")
    }

    func testURLInputIsNotFetched() throws {
        // A listening socket: the test checks nothing connected to it.
        let listener = try XCTUnwrap(LocalListener())
        let server = listener.fd
        defer { close(server) }
        let port = listener.port
        let url = "http://127.0.0.1:\(port)/x.mp4"
        let result = try gpuencode([url, scratch("out.mp4").path], timeout: guardTimeout)
        assertCleanFailure(result, exitCodes: [ExitCode.noInput], mentioning: [url])
        // The same words as a path that exists (folders "http:" and "127.0.0.1:PORT" under the working
        // directory): a file check alone lets this through to FFmpeg, which would open the URL. It must
        // be read as the local clip.
        let folder = workDirectory.appendingPathComponent("http:/127.0.0.1:\(port)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Oracle.makeClip(folder.appendingPathComponent("x.mp4"), seconds: 0.2, size: "64x48", audio: false)
        let local = try Oracle.run("/bin/sh", ["-c", "cd '\(workDirectory.path)' && exec '\(try Paths.gpuencode())' '\(url)' out-local.mp4"],
                                   timeout: guardTimeout)
        XCTAssertEqual(local.status, 0, local.summary)
        XCTAssertEqual(try Oracle.frameTimes(scratch("out-local.mp4")).count, 5)
        _ = fcntl(server, F_SETFL, O_NONBLOCK)
        XCTAssertLessThan(accept(server, nil, nil), 0, "gpuencode connected to \(url)")
    }

    func testTextAndOtherNonMediaInputsExit66() throws {
        let lines = (1...2000).map { "this is line \($0) of a text file that is not a video" }.joined(separator: "\n")
        var random = Data(count: 100_000)
        random.withUnsafeMutableBytes { for i in 0..<$0.count { $0[i] = UInt8.random(in: 0...255) } }
        let files: [(String, Data)] = [("notes.txt", Data(lines.utf8)), ("page.html", Data(("<html><body>" + lines + "</body></html>").utf8)),
                                       ("script.sh", Data(("#!/bin/sh\n" + lines).utf8)), ("noise.bin", random)]
        for (name, data) in files {
            let input = scratch(name)
            try data.write(to: input)
            let before = listing(workDirectory)
            let result = try gpuencode([input.path, scratch("out.mp4").path], timeout: guardTimeout)
            assertCleanFailure(result, exitCodes: [ExitCode.noInput], mentioning: [name], outputDirectory: workDirectory, before: before)
        }
    }

    func testSigtermWhileAFifoInputWaitsForAWriterExits143() throws {
        let fifo = scratch("input-\(UUID().uuidString).mp4")
        XCTAssertEqual(mkfifo(fifo.path, 0o644), 0)
        let process = try Oracle.start(try Paths.gpuencode(), [fifo.path, scratch("out.mp4").path])
        // Wait (a hang guard, not a timing) until it blocks opening the FIFO: its open() has no
        // writer, so it stays there; the signal must then end it as an interruption.
        let deadline = Date().addingTimeInterval(guardTimeout)
        while Date() < deadline && !Self.isOpening(fifo.path) { usleep(20_000) }
        process.send(SIGTERM)
        let result = try process.wait(timeout: guardTimeout)
        XCTAssertFalse(result.signalled, result.summary)
        XCTAssertEqual(result.status, ExitCode.terminated, result.summary)
        XCTAssertEqual(result.stderrLines.count, 1, result.summary)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch("out.mp4").path))
    }

    /// Whether a process whose command line names `path` is blocked in open/openat.
    static func isOpening(_ path: String) -> Bool {
        #if arch(x86_64)
        let calls: Set<String> = ["2", "257"]
        #else
        let calls: Set<String> = ["56"]
        #endif
        let procs = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for pid in procs where Int(pid) != nil {
            guard let cmd = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                  String(decoding: cmd, as: UTF8.self).contains(path),
                  let syscall = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8) else { continue }
            if let number = syscall.split(separator: " ").first, calls.contains(String(number)) { return true }
        }
        return false
    }
}
