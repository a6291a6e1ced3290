import Foundation
import XCTest

/// Damaged and hostile media, made here with the ffmpeg CLI and mutated by byte: truncations, seeded
/// bit flips, zeroed ranges, header fields that lie, and things that are not files at all. Whatever the
/// damage, a run ends within its guard time (no hang), never dies of a signal (no crash), and either
/// writes a file ffprobe reads (decoding through the damage, as ffmpeg does) or fails with 65/66, one
/// stderr line and nothing left in the output folder.
final class CorruptMediaTests: GPUEncodeTestCase {
    /// A hang guard, not a timing: each of these clips transcodes in about a second when healthy.
    private let guardSeconds: TimeInterval = 120

    /// One base clip per container family gpuencode reads, with sound so the audio path meets the damage too.
    private let containers: [(name: String, codec: [String])] = [
        ("base.mp4", Oracle.defaultVideoArguments),
        ("base.mov", Oracle.defaultVideoArguments),
        ("base.mkv", Oracle.defaultVideoArguments),
        ("base.webm", ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libopus"]),
    ]

    func testTruncations() throws {
        try forEachContainer { name, bytes in
            for fraction in [0.0, 0.01, 0.1, 0.5, 0.9, 0.999] {
                let cut = Int(Double(bytes.count) * fraction)
                try check(Data(bytes.prefix(max(cut, 1))), label: "\(name) cut at \(cut)/\(bytes.count)", suffix: name)
            }
        }
    }

    func testSeededBitFlips() throws {
        try forEachContainer { name, bytes in
            for seed in UInt64(1)...UInt64(4) {
                var rng = SplitMix64(seed: seed)
                var damaged = bytes
                for _ in 0..<(8 * Int(seed)) {
                    let i = Int(rng.next() % UInt64(damaged.count))
                    damaged[i] ^= UInt8(1 << (rng.next() % 8))
                }
                try check(Data(damaged), label: "\(name) bit flips seed \(seed)", suffix: name)
            }
        }
    }

    func testZeroedAndShuffledRanges() throws {
        try forEachContainer { name, bytes in
            var zeroHead = bytes
            for i in 0..<min(512, zeroHead.count) { zeroHead[i] = 0 }
            try check(Data(zeroHead), label: "\(name) first 512 bytes zeroed", suffix: name)

            var zeroMiddle = bytes
            let mid = zeroMiddle.count / 2
            for i in mid..<min(mid + 4096, zeroMiddle.count) { zeroMiddle[i] = 0 }
            try check(Data(zeroMiddle), label: "\(name) 4 KiB zeroed in the middle", suffix: name)

            // The second half first: every header is in the wrong place.
            let swapped = Array(bytes[mid...]) + Array(bytes[..<mid])
            try check(Data(swapped), label: "\(name) halves swapped", suffix: name)

            // The same clip twice in one file: the audio is copied, and its second run's timestamps
            // go back. The output keeps an audio stream whose packets move forward (ffprobe).
            try check(Data(bytes + bytes), label: "\(name) concatenated twice", suffix: name)
            let out = outputDirectory.appendingPathComponent("out.mp4")
            if FileManager.default.fileExists(atPath: out.path) {
                XCTAssertNotNil(try Oracle.streams(out).first { $0.codecType == "audio" }, "\(name) twice: the audio is gone")
                let dts = try Oracle.ffprobeJSON(["-select_streams", "a:0", "-show_entries", "packet=dts", out.path])["packets"]
                    as? [[String: Any]] ?? []
                let values = dts.compactMap { $0["dts"] as? Int }
                XCTAssertGreaterThan(values.count, 0, "\(name) twice: no audio packets")
                XCTAssertEqual(values, values.sorted(), "\(name) twice: audio timestamps go back")
                XCTAssertEqual(Set(values).count, values.count, "\(name) twice: repeated audio timestamps")
            }
        }
    }

    /// MP4/MOV boxes whose sizes and counts claim more than the file holds.
    func testMP4HeaderLies() throws {
        let bytes = try baseClip("base.mp4", Oracle.defaultVideoArguments)
        for box in ["ftyp", "moov", "mdat", "trak", "stsz", "stco", "stts", "mvhd", "avcC"] {
            guard let at = find(box, in: bytes), at >= 4 else { continue }
            for lie: UInt32 in [0, 1, 7, 0x7FFF_FFFF, 0xFFFF_FFFF] {
                var damaged = bytes
                withUnsafeBytes(of: lie.bigEndian) { for (k, b) in $0.enumerated() { damaged[at - 4 + k] = b } }
                try check(Data(damaged), label: "\(box) size \(lie)", suffix: "base.mp4")
            }
            // The first count or field after the box header: entry counts, widths, timescales.
            if at + 16 <= bytes.count {
                var damaged = bytes
                for k in (at + 8)..<(at + 16) { damaged[k] = 0xFF }
                try check(Data(damaged), label: "\(box) fields all ones", suffix: "base.mp4")
            }
        }
    }

    /// A Matroska EBML header that claims an element of 2^56 bytes.
    func testMatroskaSizeLie() throws {
        let bytes = try baseClip("base.mkv", Oracle.defaultVideoArguments)
        guard let segment = find(bytes: [0x18, 0x53, 0x80, 0x67], in: bytes) else { return XCTFail("no Segment element") }
        var damaged = bytes
        damaged[segment + 4] = 0x01
        for k in 1...7 { damaged[segment + 4 + k] = 0xFF }
        try check(Data(damaged), label: "Segment size 2^56", suffix: "base.mkv")
    }

    func testEmptyFile() throws {
        try check(Data(), label: "empty file", suffix: "empty.mp4", mustFail: true)
    }

    /// Things that are not regular files: a device that never ends, one that is always empty, a folder.
    func testDevicesAndFolders() throws {
        for path in ["/dev/zero", "/dev/null", "/dev/urandom", workDirectory.path] {
            let result = try run(input: path)
            assertCleanFailure(result, exitCodes: [ExitCode.noInput], mentioning: [path],
                               outputDirectory: outputDirectory, before: [])
        }
    }

    /// A FIFO whose writer sends a few KiB of noise and closes: a clear refusal, not a hang.
    func testFIFOWithGarbage() throws {
        let fifo = scratch("noise.mp4")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let writer = try Oracle.start("/bin/sh", ["-c", "head -c 65536 /dev/urandom > '\(fifo.path)'"])
        let result = try run(input: fifo.path)
        _ = try? writer.wait(timeout: 10)
        assertCleanFailure(result, exitCodes: [ExitCode.dataError, ExitCode.noInput], mentioning: [fifo.path],
                           outputDirectory: outputDirectory, before: [])
    }

    // MARK: - Helpers

    private var outputDirectory: URL { scratch("out") }

    private func forEachContainer(_ body: (String, [UInt8]) throws -> Void) throws {
        for (name, codec) in containers {
            try body(name, try baseClip(name, codec))
        }
    }

    private func baseClip(_ name: String, _ codec: [String]) throws -> [UInt8] {
        let file = scratch(name)
        if !FileManager.default.fileExists(atPath: file.path) {
            var arguments = ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "1"]
            arguments += codec
            if !codec.contains("-c:a") { arguments += ["-c:a", "aac"] }
            try Oracle.runChecked("ffmpeg", arguments + [file.path])
        }
        return Array(try Data(contentsOf: file))
    }

    private func run(input: String) throws -> ProcessResult {
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        return try gpuencode([input, outputDirectory.appendingPathComponent("out.mp4").path, "--x264-preset", "ultrafast", "--preset", "sepia"],
                             timeout: guardSeconds)
    }

    /// One damaged input: a playable output or a clean 65/66, never a crash, hang or leftover.
    private func check(_ data: Data, label: String, suffix: String, mustFail: Bool = false,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let input = scratch("damaged-" + suffix)
        try data.write(to: input)
        let output = outputDirectory.appendingPathComponent("out.mp4")
        try? FileManager.default.removeItem(at: outputDirectory)
        let result = try run(input: input.path)
        XCTAssertFalse(result.signalled, "\(label): crashed: \(result.summary)", file: file, line: line)
        if result.status == ExitCode.ok && !mustFail {
            let video = try Oracle.streams(output).first { $0.codecType == "video" }
            XCTAssertEqual(video?.codecName, "h264", "\(label): exit 0 but no playable video", file: file, line: line)
            XCTAssertEqual(listing(outputDirectory), ["out.mp4"], "\(label): files besides the output", file: file, line: line)
        } else {
            assertCleanFailure(result, exitCodes: [ExitCode.dataError, ExitCode.noInput], mentioning: [input.path],
                               outputDirectory: outputDirectory, before: [], file: file, line: line)
        }
    }

    private func find(_ box: String, in bytes: [UInt8]) -> Int? {
        find(bytes: Array(box.utf8), in: bytes)
    }

    private func find(bytes needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for i in 0...(bytes.count - needle.count) where bytes[i] == needle[0] {
            if Array(bytes[i..<(i + needle.count)]) == needle { return i }
        }
        return nil
    }
}

/// A tiny seeded generator (SplitMix64), so each damaged file is the same on every run and machine.
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
