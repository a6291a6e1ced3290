import Foundation
import XCTest

// These tests drive the real `gpuencode` binary and judge its output with ffprobe/ffmpeg only, so that a
// bug in GPUEncodeKit cannot also hide itself in the checks. Nothing here imports the package's code.

/// The documented exit codes of `gpuencode` (sysexits.h values, plus 128 + signal number).
enum ExitCode {
    static let ok: Int32 = 0
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let noInput: Int32 = 66
    static let badPreset: Int32 = 67
    static let gpuUnavailable: Int32 = 69
    static let cannotCreate: Int32 = 73
    static let ioError: Int32 = 74
    static let interrupted: Int32 = 130
    static let terminated: Int32 = 143

    /// Every non-zero code a run that was not sent a signal may end with.
    static let documentedFailures: Set<Int32> = [usage, dataError, noInput, badPreset, gpuUnavailable, cannotCreate, ioError]
}

struct OracleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Paths {
    /// The package root: the parent of the `Tests` folder this file lives in (at any depth below it).
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.lastPathComponent != "Tests" && url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
        }
        return url.deletingLastPathComponent()
    }()

    /// Third-party clips shared by every checkout; they must never be copied into the repository.
    static let mediaDirectory: URL = packageRoot
        .deletingLastPathComponent()
        .appendingPathComponent("shared/media", isDirectory: true)

    /// `$GPUENCODE_BIN` when set (e.g. a release build), else the debug build of this package.
    static func gpuencode() throws -> String {
        let path = ProcessInfo.processInfo.environment["GPUENCODE_BIN"]
            ?? packageRoot.appendingPathComponent(".build/debug/gpuencode").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw OracleError("gpuencode binary not found or not executable at \(path): run `swift build` first, or set GPUENCODE_BIN")
        }
        return path
    }

    /// The media folder; skips the test where it is absent.
    static func requireMedia() throws -> URL {
        guard FileManager.default.fileExists(atPath: mediaDirectory.path) else {
            throw XCTSkip("test media not found at \(mediaDirectory.path)")
        }
        return mediaDirectory
    }

    /// A clip from ../shared/media; skips the test where the media folder is absent.
    static func media(_ name: String) throws -> URL {
        let url = try requireMedia().appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw OracleError("clip \(name) is missing from \(mediaDirectory.path)")
        }
        return url
    }
}

// MARK: - Processes

struct ProcessResult: Sendable {
    /// The exit status, or the signal number when `signalled` is true.
    let status: Int32
    let signalled: Bool
    let stdout: String
    let stderr: String

    var stderrLines: [String] {
        stderr.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.allSatisfy(\.isWhitespace) }
    }

    var summary: String {
        let how = signalled ? "killed by signal \(status)" : "exit \(status)"
        return "\(how); stderr: \(stderr.suffix(2000))"
    }
}

/// A child process whose output goes to files, so a chatty child can never block on a full pipe.
final class RunningProcess: @unchecked Sendable {
    private let process = Process()
    private let finished = DispatchSemaphore(value: 0)
    private let captureDirectory: URL
    private let commandLine: String

    /// `environment`: variables set (added to or replacing this process's) for the child.
    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        let path = try Self.resolve(executable)
        commandLine = ([path] + arguments).joined(separator: " ")
        captureDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gpuencode-capture-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: captureDirectory, withIntermediateDirectories: true)
        do {
            try launch(path, arguments, environment: environment)
        } catch {
            try? FileManager.default.removeItem(at: captureDirectory)
            throw error
        }
    }

    private func launch(_ path: String, _ arguments: [String], environment: [String: String]?) throws {
        let out = captureDirectory.appendingPathComponent("stdout")
        let err = captureDirectory.appendingPathComponent("stderr")
        guard FileManager.default.createFile(atPath: out.path, contents: nil),
              FileManager.default.createFile(atPath: err.path, contents: nil) else {
            throw OracleError("cannot create capture files in \(captureDirectory.path)")
        }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let finished = self.finished
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the child; one that outlives `timeout` is killed and reported as an error, so a hang
    /// fails one test instead of stalling the whole suite.
    func wait(timeout: TimeInterval) throws -> ProcessResult {
        defer { try? FileManager.default.removeItem(at: captureDirectory) }
        if finished.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            finished.wait()
            throw OracleError("timed out after \(Int(timeout)) s: \(commandLine)")
        }
        func read(_ name: String) -> String {
            let data = FileManager.default.contents(atPath: captureDirectory.appendingPathComponent(name).path) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
        return ProcessResult(status: process.terminationStatus,
                             signalled: process.terminationReason == .uncaughtSignal,
                             stdout: read("stdout"),
                             stderr: read("stderr"))
    }

    private static func resolve(_ executable: String) throws -> String {
        if executable.contains("/") { return executable }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw OracleError("\(executable) not found in PATH")
    }
}

// MARK: - Probing with ffprobe / ffmpeg

struct StreamInfo: Sendable {
    let index: Int
    let codecType: String
    let codecName: String?
    let width: Int?
    let height: Int?
    let pixelFormat: String?
    let colorSpace: String?
    let colorTransfer: String?
    let colorPrimaries: String?
    let colorRange: String?
    /// Seconds per tick of the stream's time base.
    let tick: Double?
    let startTime: Double?
    let sideDataTypes: [String]
    /// Degrees from the display-matrix side data; nil when the stream has none.
    let rotation: Double?

    init(_ json: [String: Any]) {
        func string(_ key: String) -> String? {
            guard let value = json[key] as? String, value != "N/A", value != "unknown" else { return nil }
            return value
        }
        func number(_ value: Any?) -> Double? {
            if let text = value as? String { return Double(text) }
            return (value as? NSNumber)?.doubleValue
        }
        index = (json["index"] as? NSNumber)?.intValue ?? -1
        codecType = string("codec_type") ?? "unknown"
        codecName = string("codec_name")
        width = (json["width"] as? NSNumber)?.intValue
        height = (json["height"] as? NSNumber)?.intValue
        pixelFormat = string("pix_fmt")
        colorSpace = string("color_space")
        colorTransfer = string("color_transfer")
        colorPrimaries = string("color_primaries")
        colorRange = string("color_range")
        startTime = number(json["start_time"])
        if let parts = string("time_base")?.split(separator: "/"), parts.count == 2,
           let num = Double(parts[0]), let den = Double(parts[1]), den > 0 {
            tick = num / den
        } else {
            tick = nil
        }
        let sideData = json["side_data_list"] as? [[String: Any]] ?? []
        sideDataTypes = sideData.compactMap { $0["side_data_type"] as? String }
        rotation = sideData.first { $0["side_data_type"] as? String == "Display Matrix" }
            .flatMap { number($0["rotation"]) }
    }
}

/// Results that cost a decode are kept for the whole run: the shared clips never change.
final class Memo<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Value] = [:]

    func value(for key: String, compute: () throws -> Value) rethrows -> Value {
        if let cached = lock.withLock({ values[key] }) { return cached }
        let value = try compute()
        lock.withLock { values[key] = value }
        return value
    }
}

enum Oracle {
    static let defaultTimeout: TimeInterval = 600

    static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = defaultTimeout,
                    environment: [String: String]? = nil) throws -> ProcessResult {
        try RunningProcess(executable, arguments, environment: environment).wait(timeout: timeout)
    }

    static func start(_ executable: String, _ arguments: [String]) throws -> RunningProcess {
        try RunningProcess(executable, arguments)
    }

    /// Runs a tool that must succeed for the test to mean anything.
    @discardableResult
    static func runChecked(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
        let result = try run(executable, arguments)
        guard !result.signalled, result.status == 0 else {
            throw OracleError("\(executable) \(arguments.joined(separator: " ")) failed: \(result.summary)")
        }
        return result
    }

    /// A tool's stdout as bytes (raw pictures), via a temporary file.
    static func runCheckedData(_ executable: String, _ arguments: [String]) throws -> Data {
        precondition(arguments.last == "-")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("oracle-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        try runChecked(executable, Array(arguments.dropLast()) + [file.path])
        return try Data(contentsOf: file)
    }

    static func ffprobeJSON(_ arguments: [String]) throws -> [String: Any] {
        let result = try runChecked("ffprobe", ["-v", "error", "-of", "json"] + arguments)
        guard let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw OracleError("ffprobe \(arguments.joined(separator: " ")) printed no JSON object")
        }
        return object
    }

    static func streams(_ file: URL) throws -> [StreamInfo] {
        let json = try ffprobeJSON(["-show_streams", file.path])
        return (json["streams"] as? [[String: Any]] ?? []).map(StreamInfo.init)
    }

    /// Presentation times of the frames the first video stream actually decodes to, in the order the decoder
    /// returns them (presentation order, unless the stream is damaged). Container metadata such as nb_frames
    /// is not trusted: edit lists and damage make it disagree with decoding.
    static func frameTimes(_ file: URL) throws -> [Double] {
        let json = try ffprobeJSON(["-select_streams", "v:0", "-show_entries", "frame=best_effort_timestamp_time", file.path])
        let frames = json["frames"] as? [[String: Any]] ?? []
        return try frames.enumerated().map { number, frame in
            guard let text = frame["best_effort_timestamp_time"] as? String, let time = Double(text) else {
                throw OracleError("decoded frame \(number) of \(file.path) has no timestamp")
            }
            return time
        }
    }

    /// The file's start time as ffprobe reports it (format start_time: the earliest stream's first
    /// time), the input time that the ffmpeg CLI's default (no -copyts) makes 0; 0 when it says none.
    static func formatStartTime(_ file: URL) throws -> Double {
        let json = try ffprobeJSON(["-show_entries", "format=start_time", file.path])
        return ((json["format"] as? [String: Any])?["start_time"] as? String).flatMap(Double.init) ?? 0
    }

    /// MD5 of the packets of audio stream `index`, without decoding: equal only for a packet-for-packet copy.
    static func audioMD5(_ file: URL, index: Int) throws -> String {
        let result = try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path,
                                               "-map", "0:a:\(index)", "-c", "copy", "-f", "md5", "-"])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Average PSNR in dB of `a` against `b`, frame i against frame i (their timestamps are ignored, so
    /// differing time bases cannot pair the wrong frames).
    static func psnr(_ a: URL, _ b: URL) throws -> Double {
        let graph = "[0:v]settb=1/30,setpts=N[a];[1:v]settb=1/30,setpts=N[b];[a][b]psnr"
        let result = try runChecked("ffmpeg", ["-nostdin", "-hide_banner", "-nostats", "-i", a.path, "-i", b.path,
                                               "-lavfi", graph, "-f", "null", "-"])
        guard let line = result.stderr.split(whereSeparator: \.isNewline).last(where: { $0.contains("PSNR y:") }),
              let label = line.range(of: "average:") else {
            throw OracleError("no PSNR summary from ffmpeg: \(result.stderr.suffix(2000))")
        }
        let figure = line[label.upperBound...].prefix { !$0.isWhitespace }
        guard let value = Double(figure) else { throw OracleError("unreadable PSNR figure in: \(line)") }
        return value
    }

    /// Y, Cb and Cr PSNR in dB of `a` against `b`, frame i against frame i (99 for identical planes).
    static func planePSNR(_ a: URL, _ b: URL) throws -> [Double] {
        let result = try runChecked("ffmpeg", ["-nostdin", "-hide_banner", "-i", a.path, "-i", b.path, "-lavfi",
                                               "[0:v]setpts=N[a];[1:v]setpts=N[b];[a][b]psnr", "-f", "null", "-"])
        guard let line = result.stderr.split(whereSeparator: \.isNewline).last(where: { $0.contains("PSNR y:") }) else {
            throw OracleError("no PSNR summary from ffmpeg: \(result.stderr.suffix(2000))")
        }
        return try ["y:", "u:", "v:"].map { key in
            guard let start = line.range(of: " " + key)?.upperBound else { throw OracleError("no \(key) in: \(line)") }
            let figure = line[start...].prefix { !$0.isWhitespace }
            if figure == "inf" { return 99 }
            guard let value = Double(figure) else { throw OracleError("unreadable PSNR figure in: \(line)") }
            return value
        }
    }

    /// Per-frame `signalstats` values (YAVG, UAVG, SATMAX, ...) of the first video stream.
    static func signalStats(_ file: URL) throws -> [[String: Double]] {
        let result = try runChecked("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:v:0",
                                               "-vf", "signalstats,metadata=mode=print:file=/dev/stdout",
                                               "-f", "null", "-"])
        var frames: [[String: Double]] = []
        for line in result.stdout.split(whereSeparator: \.isNewline) {
            if line.hasPrefix("frame:") {
                frames.append([:])
            } else if line.hasPrefix("lavfi.signalstats."), !frames.isEmpty {
                let pair = line.dropFirst("lavfi.signalstats.".count).split(separator: "=", maxSplits: 1)
                if pair.count == 2, let value = Double(pair[1]) {
                    frames[frames.count - 1][String(pair[0])] = value
                }
            }
        }
        return frames
    }

    static func sha256(_ file: URL) throws -> String {
        let result = try runChecked("sha256sum", [file.path])
        return String(result.stdout.prefix { !$0.isWhitespace })
    }

    static let defaultVideoArguments = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]

    /// A synthetic clip: the testsrc2 pattern, plus a 440 Hz tone unless `audio` is false.
    static func makeClip(_ file: URL, seconds: Double = 1, size: String = "320x240", rate: Int = 25,
                         audio: Bool = true, videoArguments: [String] = defaultVideoArguments) throws {
        var arguments = ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate)"]
        if audio {
            arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-c:a", "aac"]
        }
        arguments += ["-t", String(seconds)] + videoArguments + [file.path]
        try runChecked("ffmpeg", arguments)
    }
}

// MARK: - Test case base

/// Gives every test a fresh scratch directory, removed afterwards whatever the outcome.
class GPUEncodeTestCase: XCTestCase {
    private(set) var workDirectory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        workDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gpuencode-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let workDirectory {
            // A test may have made a folder read-only; removal needs it writable again.
            if let enumerator = FileManager.default.enumerator(atPath: workDirectory.path) {
                for case let relative as String in enumerator {
                    chmod(workDirectory.appendingPathComponent(relative).path, 0o755)
                }
            }
            chmod(workDirectory.path, 0o755)
            try FileManager.default.removeItem(at: workDirectory)
        }
        try super.tearDownWithError()
    }

    func scratch(_ name: String) -> URL {
        workDirectory.appendingPathComponent(name)
    }

    /// Every name in `directory`, hidden ones included, so a leftover `.out.mp4.partial` shows up too.
    func listing(_ directory: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    func gpuencode(_ arguments: [String], timeout: TimeInterval = Oracle.defaultTimeout,
                   environment: [String: String]? = nil) throws -> ProcessResult {
        try Oracle.run(try Paths.gpuencode(), arguments, timeout: timeout, environment: environment)
    }

    /// The contract for every failure: a documented code (not a crash), exactly one stderr line naming
    /// the culprit, and nothing new in the output directory (its listing taken before the run is `before`).
    func assertCleanFailure(_ result: ProcessResult, exitCodes: Set<Int32>, mentioning culprits: [String],
                            outputDirectory: URL? = nil, before: Set<String> = [],
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(result.signalled, "crashed instead of failing cleanly: \(result.summary)", file: file, line: line)
        XCTAssertTrue(exitCodes.contains(result.status),
                      "expected exit \(exitCodes.sorted()), got \(result.summary)", file: file, line: line)
        let lines = result.stderrLines
        XCTAssertEqual(lines.count, 1, "expected one stderr line, got \(lines.count): \(lines)", file: file, line: line)
        for culprit in culprits {
            XCTAssertTrue(result.stderr.contains(culprit), "stderr does not name \(culprit): \(result.stderr)",
                          file: file, line: line)
        }
        if let outputDirectory {
            let leftovers = listing(outputDirectory).subtracting(before)
            XCTAssertTrue(leftovers.isEmpty, "failure left files in \(outputDirectory.path): \(leftovers.sorted())",
                          file: file, line: line)
        }
    }
}
