import GPUEncodeCore
import Glibc

/// Rewrites, in a finished MP4/MOV file, the edit list of a track that starts after 0 so that it
/// also skips the encoder's priming: [empty edit T][media time 0, duration D] becomes
/// [empty edit T][media time P, duration D − P] (and a lone [media time 0], where T was under one
/// movie tick and the muxer left the empty edit out, becomes [media time P]).
///
/// Why: FFmpeg 5.1's mov muxer (movenc's mov_write_edts_tag) writes either an empty edit (a track
/// whose first packet is after 0) or a media time (a track whose first packet is before 0), never
/// both, so a re-encoded AAC track starting at T > 0 would play its 1024 priming samples just
/// before T. The audio's packets are therefore moved P samples later (the first at T, see
/// AudioTranscodeHandler), the muxer writes [empty edit T][media time 0], and this patch adds the
/// skip. Only numbers inside boxes change, never a box's size, so nothing else in the file moves.
///
/// The boxes are read field by field (pread), never whole, so no size in the file decides how much
/// memory is taken. Anything not exactly as expected (no moov, a box that does not fit its parent,
/// a track whose edit list is not those entries) leaves the file as the muxer wrote it: a valid
/// file, but one whose audio plays its priming at T and its content 1024 samples late. FFmpeg
/// 5.1's own output always has the expected shape (EditListPatchTests, AudioSyncTests).
enum EditListPatch {
    /// A track to patch: its 0-based position among the moov's traks (= the output stream index;
    /// checked against tkhd's track_ID, which the muxer numbers from 1) and the samples to skip at
    /// `rate` per second.
    struct Skip {
        let track: Int
        let samples: Int64
        let rate: Int64
    }

    /// Patches `fd` (open for reading and writing). Throws only when writing the patch fails; every
    /// other problem leaves the file untouched and returns false.
    @discardableResult
    static func apply(fd: Int32, skips: [Skip], path: String) throws -> Bool {
        guard !skips.isEmpty, let (moovOffset, moovSize) = findMoov(fd: fd), moovSize <= Int64(Int.max / 2) else { return false }
        let file = Reader(fd: fd, base: moovOffset)
        guard let root = file.box(at: 0, end: Int(moovSize)), root.type == "moov",
              let edits = file.plan(root, skips: skips), !edits.isEmpty else { return false }
        for (offset, bytes) in edits {
            guard writeFully(fd: fd, bytes, at: moovOffset + Int64(offset)) else {
                throw GPUEncodeError(.encode, path: path, "cannot patch the edit list: \(errnoString())")
            }
        }
        return true
    }

    /// The top-level moov box: its offset and total size (header included).
    private static func findMoov(fd: Int32) -> (Int64, Int64)? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let fileSize = Int64(st.st_size)
        var offset: Int64 = 0
        while offset + 8 <= fileSize {
            var header = [UInt8](repeating: 0, count: 16)
            let want = Int(min(16, fileSize - offset))
            header.removeLast(16 - want)
            guard readFully(fd: fd, into: &header, at: offset) else { return nil }
            var size = Int64(be(header, 0, 4))
            var headerSize: Int64 = 8
            if size == 1 {
                guard header.count >= 16 else { return nil }
                let large = be(header, 8, 8)
                guard large <= UInt64(Int64.max) else { return nil }
                size = Int64(large)
                headerSize = 16
            } else if size == 0 {
                size = fileSize - offset
            }
            guard size >= headerSize, size <= fileSize - offset else { return nil }
            if String(decoding: header[4..<8], as: UTF8.self) == "moov" { return (offset, size) }
            offset += size
        }
        return nil
    }

    static func readFully(fd: Int32, into buffer: inout [UInt8], at offset: Int64) -> Bool {
        var done = 0
        let count = buffer.count
        return buffer.withUnsafeMutableBytes { raw in
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
    }

    private static func writeFully(fd: Int32, _ bytes: [UInt8], at offset: Int64) -> Bool {
        var done = 0
        return bytes.withUnsafeBytes { raw in
            while done < bytes.count {
                let n = pwrite(fd, raw.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                done += n
            }
            return true
        }
    }
}

/// Big-endian unsigned integer of `count` bytes at `at`.
private func be(_ bytes: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
    var v: UInt64 = 0
    for i in 0..<count { v = v << 8 | UInt64(bytes[at + i]) }
    return v
}


private func bytesBE(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64(count - 1 - $0))) }
}

/// A box inside the moov buffer: `payload` starts after its header, `end` is one past its last byte.
private struct Box {
    let type: String
    let start: Int
    let payload: Int
    let end: Int
}

/// The moov box read through the descriptor, a few bytes at a time; offsets are from its start.
private struct Reader {
    let fd: Int32
    let base: Int64

    /// Big-endian unsigned integer of `count` (at most 8) bytes at `at`; nil when it cannot be read.
    func be(_ at: Int, _ count: Int) -> UInt64? {
        var bytes = [UInt8](repeating: 0, count: count)
        guard EditListPatch.readFully(fd: fd, into: &bytes, at: base + Int64(at)) else { return nil }
        return GPUEncodeMedia.be(bytes, 0, count)
    }

    /// The box at `at`, which must end by `end`.
    func box(at: Int, end: Int) -> Box? {
        guard at + 8 <= end, var size = be(at, 4).map(Int.init), let type = be(at + 4, 4) else { return nil }
        var header = 8
        if size == 1 {
            guard at + 16 <= end, let large = be(at + 8, 8), large <= UInt64(end - at) else { return nil }
            size = Int(large)
            header = 16
        } else if size == 0 {
            size = end - at
        }
        guard size >= header, size <= end - at else { return nil }
        let name = String(decoding: bytesBE(type, 4), as: UTF8.self)
        return Box(type: name, start: at, payload: at + header, end: at + size)
    }

    /// The children of `parent`; nil when one of them does not fit.
    func children(_ parent: Box) -> [Box]? {
        var list: [Box] = []
        var at = parent.payload
        while at < parent.end {
            guard let b = box(at: at, end: parent.end) else { return nil }
            list.append(b)
            at = b.end
        }
        return list
    }

    func child(_ parent: Box, _ type: String) -> Box? {
        children(parent)?.first { $0.type == type }
    }

    /// A full box's version (0 or 1); nil for anything else.
    func version(_ b: Box) -> UInt64? {
        guard b.payload + 4 <= b.end, let v = be(b.payload, 1), v <= 1 else { return nil }
        return v
    }

    /// A full box's (mvhd, tkhd, mdhd) duration field: its offset, width (version 1 widens it and
    /// the two times before it to 8 bytes) and value, and the timescale just before it (mvhd, mdhd).
    func durationField(_ b: Box, timescaleBefore: Bool) -> (offset: Int, width: Int, value: UInt64, timescale: UInt64)? {
        guard let version = version(b) else { return nil }
        let times = version == 1 ? 16 : 8
        let width = version == 1 ? 8 : 4
        // mvhd, mdhd: times, timescale (4), duration. tkhd: times, track_ID (4), reserved (4), duration.
        let durationAt = b.payload + 4 + times + (timescaleBefore ? 4 : 8)
        guard durationAt + width <= b.end, let value = be(durationAt, width),
              let timescale = timescaleBefore ? be(b.payload + 4 + times, 4) : 0 else { return nil }
        return (durationAt, width, value, timescale)
    }

    /// The byte edits (offset in the moov, new bytes) that apply `skips`; nil when the moov is not
    /// as expected. Built whole before anything is written, so the file is patched entirely or not at all.
    func plan(_ moov: Box, skips: [EditListPatch.Skip]) -> [(Int, [UInt8])]? {
        guard let top = children(moov), let mvhd = top.first(where: { $0.type == "mvhd" }),
              let movie = durationField(mvhd, timescaleBefore: true), movie.timescale > 0 else { return nil }
        let movieScale = movie.timescale
        let traks = top.filter { $0.type == "trak" }
        var tkhdDurations: [(offset: Int, width: Int, value: UInt64)] = []
        for trak in traks {
            guard let tkhd = child(trak, "tkhd"), let f = durationField(tkhd, timescaleBefore: false) else { return nil }
            tkhdDurations.append((f.offset, f.width, f.value))
        }
        let oldMax = tkhdDurations.map(\.value).max() ?? 0
        var edits: [(Int, [UInt8])] = []
        for skip in skips {
            guard skip.track >= 0, skip.track < traks.count, skip.samples > 0, skip.samples < 1 << 20,
                  skip.rate > 0, skip.rate < 1 << 24 else { return nil }
            let samples = UInt64(skip.samples), rate = UInt64(skip.rate)
            let trak = traks[skip.track]
            // track_ID follows the two times.
            guard let tkhd = child(trak, "tkhd"), let tkhdVersion = version(tkhd) else { return nil }
            let idAt = tkhd.payload + 4 + (tkhdVersion == 1 ? 16 : 8)
            guard idAt + 4 <= tkhd.end, be(idAt, 4) == UInt64(skip.track + 1) else { return nil }
            guard let mdia = child(trak, "mdia"), let mdhd = child(mdia, "mdhd"),
                  let media = durationField(mdhd, timescaleBefore: true), media.timescale > 0 else { return nil }
            let mediaScale = media.timescale
            // The skip in the media timescale, exactly (the muxer's audio timescale is the sample rate).
            guard samples * mediaScale % rate == 0 else { return nil }
            let mediaSkip = samples * mediaScale / rate
            // And in the movie timescale, where edit durations count: rounded to nearest.
            let movieSkip = (samples * movieScale * 2 + rate) / (2 * rate)
            guard let edts = child(trak, "edts"), let elst = child(edts, "elst"), let elstVersion = version(elst),
                  elst.payload + 8 <= elst.end, let count = be(elst.payload + 4, 4) else { return nil }
            let width = elstVersion == 1 ? 8 : 4
            let entrySize = 2 * width + 4
            guard count == 1 || count == 2, elst.payload + 8 + Int(count) * entrySize <= elst.end else { return nil }
            // [empty edit T][media time 0]; [media time 0] alone where T rounded to 0 movie ticks.
            let last = elst.payload + 8 + (Int(count) - 1) * entrySize
            let allOnes: UInt64 = width == 8 ? .max : 0xFFFF_FFFF
            if count == 2 { guard be(elst.payload + 8 + width, width) == allOnes else { return nil } }
            guard be(last + width, width) == 0, let segment = be(last, width), segment > movieSkip,
                  width == 8 || mediaSkip <= UInt64(Int32.max) else { return nil }
            // The muxer rounds the segment up from the media's duration; where it covers the whole
            // media, the new one is rounded the same way from what is left after the skip (a 1/1000
            // movie timescale would otherwise round twice), else it is cut by the rounded skip.
            var newSegment = segment - movieSkip
            func roundedUp(_ v: UInt64) -> UInt64? {
                let (product, overflow) = v.multipliedReportingOverflow(by: movieScale)
                return overflow || product > UInt64.max / 2 ? nil : (product + mediaScale - 1) / mediaScale
            }
            if media.value > mediaSkip, roundedUp(media.value) == segment, let left = roundedUp(media.value - mediaSkip) {
                newSegment = left
            }
            let cut = segment - newSegment
            edits.append((last, bytesBE(newSegment, width)))
            edits.append((last + width, bytesBE(mediaSkip, width)))
            let t = tkhdDurations[skip.track]
            guard t.value > cut else { return nil }
            tkhdDurations[skip.track].value = t.value - cut
            edits.append((t.offset, bytesBE(tkhdDurations[skip.track].value, t.width)))
        }
        // The movie's duration is its longest track's: follow it when it was.
        if movie.value == oldMax, let newMax = tkhdDurations.map(\.value).max(), newMax != oldMax {
            edits.append((movie.offset, bytesBE(newMax, movie.width)))
        }
        return edits
    }
}
