import Foundation
import XCTest
@testable import GPUEncodeMedia

/// EditListPatch on files the ffmpeg CLI writes: AAC starting after 0 gets [empty edit][media time 0],
/// which the patch turns into [empty edit][media time 1024]; anything else (another edit list, sizes
/// that lie, a truncated file) is left byte for byte as it was.
final class EditListPatchTests: GPUEncodeTestCase {
    /// An MP4 with video at 0 and AAC starting at 0.5 s: the CLI gives the audio [empty edit][media time 0].
    private func makeLateAAC() throws -> URL {
        let file = scratch("late-aac.mp4")
        try Oracle.runChecked("ffmpeg", ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=25",
                                         "-itsoffset", "0.5", "-f", "lavfi", "-i", "sine=f=440:r=48000:d=1",
                                         "-map", "0:v", "-map", "1:a", "-t", "1.5", "-c:v", "libx264", "-preset", "ultrafast",
                                         "-c:a", "aac", "-movflags", "+faststart", "-movie_timescale", "48000", file.path])
        return file
    }

    /// The edits of `track` as ffprobe's mov demuxer reads them: (duration, media time).
    private func edits(_ file: URL, track: Int) throws -> [(Int64, Int64)] {
        let result = try Oracle.run("ffprobe", ["-v", "trace", file.path])
        var current = -1
        var list: [(Int64, Int64)] = []
        for line in result.stderrLines {
            if let r = line.range(of: "track["), line.contains("edit_count"), let close = line[r.upperBound...].firstIndex(of: "]") {
                current = Int(line[r.upperBound..<close]) ?? -1
            } else if current == track, let d = line.range(of: "] duration="), let t = line.range(of: " time=") {
                let duration = Int64(line[d.upperBound...].prefix { $0.isNumber }) ?? -2
                let time = Int64(line[t.upperBound...].prefix { $0.isNumber || $0 == "-" }) ?? -2
                list.append((duration, time))
            } else if !line.contains("] duration=") {
                current = -1
            }
        }
        return list
    }

    private func patch(_ file: URL, track: Int = 1) throws -> Bool {
        let fd = open(file.path, O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        return try EditListPatch.apply(fd: fd, skips: [.init(track: track, samples: 1024, rate: 48000)], path: file.path)
    }

    func testAddsThePrimingSkipAfterAnEmptyEdit() throws {
        let file = try makeLateAAC()
        let before = try edits(file, track: 1)
        let video = try edits(file, track: 0).map(\.0)
        XCTAssertEqual(before.count, 2)
        guard before.count == 2 else { return }
        XCTAssertEqual(before[0].1, -1)
        XCTAssertEqual(before[1].1, 0)
        XCTAssertTrue(try patch(file))
        let after = try edits(file, track: 1)
        XCTAssertEqual(after.count, 2)
        guard after.count == 2 else { return }
        XCTAssertEqual(after[0].0, before[0].0, "the empty edit stays")
        XCTAssertEqual(after[0].1, -1)
        XCTAssertEqual(after[1].0, before[1].0 - 1024, "the segment loses the priming (movie timescale 48000)")
        XCTAssertEqual(after[1].1, 1024)
        // The first decoded sample is where the empty edit ends; nothing else changed.
        XCTAssertEqual(try AudioOracle.firstSampleTime(file), Double(before[0].0) / 48000, accuracy: 1e-6)
        XCTAssertEqual(try AudioOracle.decodeErrors(file), "")
        XCTAssertEqual(try edits(file, track: 0).map(\.0), video)
    }

    func testLeavesOtherEditListsAlone() throws {
        let file = try makeLateAAC()
        let original = try Data(contentsOf: file)
        // The video track's edit list is [media time 0] without an empty edit; track 5 does not exist.
        XCTAssertFalse(try patch(file, track: 0))
        XCTAssertFalse(try patch(file, track: 5))
        XCTAssertEqual(try Data(contentsOf: file), original)
        // Patched once, the audio's no longer has media time 0: a second patch does nothing.
        XCTAssertTrue(try patch(file))
        let patched = try Data(contentsOf: file)
        XCTAssertFalse(try patch(file))
        XCTAssertEqual(try Data(contentsOf: file), patched)
    }

    func testLeavesDamagedFilesAlone() throws {
        let original = try Data(contentsOf: try makeLateAAC())
        let bytes = [UInt8](original)
        guard let moov = find("moov", in: bytes), let elst = find("elst", in: bytes, last: true),
              let trak = find("trak", in: bytes, last: true) else {
            return XCTFail("no moov/trak/elst in the CLI's file")
        }
        var cases: [(String, [UInt8])] = []
        for (name, at) in [("moov", moov), ("trak", trak), ("elst", elst)] {
            for size: UInt32 in [0xFFFF_FFF0, 1, 7, 0x7FFF_FFFF] {
                var damaged = bytes
                withUnsafeBytes(of: size.bigEndian) { damaged.replaceSubrange((at - 4)..<at, with: $0) }
                cases.append(("\(name) size \(size)", damaged))
            }
        }
        var entries = bytes
        entries[elst + 8 + 3] = 200 // an entry count far beyond the box
        cases.append(("elst entry count", entries))
        // Cut inside the moov (faststart puts it first; a cut in the mdat after it leaves it whole).
        let moovEnd = moov - 4 + bytes[(moov - 4)..<moov].reduce(0) { $0 << 8 | Int($1) }
        for cut in [moov + 100, elst + 8, moovEnd - 1] {
            cases.append(("cut at \(cut) (moov ends at \(moovEnd))", Array(bytes.prefix(cut))))
        }
        for (label, damaged) in cases {
            let file = scratch("damaged.mp4")
            try Data(damaged).write(to: file)
            XCTAssertFalse(try patch(file), label)
            XCTAssertEqual(try Data(contentsOf: file), Data(damaged), label)
        }
    }

    /// The offset of the first (or last: the audio track's) `type` box's type field.
    private func find(_ type: String, in bytes: [UInt8], last: Bool = false) -> Int? {
        let pattern = Array(type.utf8)
        guard bytes.count >= 8 else { return nil }
        let range = 4..<(bytes.count - 4)
        let matches = { (i: Int) in Array(bytes[i..<(i + 4)]) == pattern }
        return last ? range.reversed().first(where: matches) : range.first(where: matches)
    }
}
