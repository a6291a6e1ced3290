import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings
import CShim
import Glibc

/// The output container, written to a hidden temporary file beside the target and renamed into
/// place only when complete, so a failure or Ctrl-C never leaves a partial file behind.
///
/// The muxer writes through an AVIOContext on the descriptor of the temporary we created
/// exclusively (TemporaryFile), never through avio_open: avio_open opens by name with
/// O_CREAT|O_TRUNC and follows a symlink that someone swapped in for the name. The one place the
/// MP4 muxer opens the output by name again is +faststart's second pass (mov's shift_data
/// re-opens `url` for reading); `url` is therefore /proc/self/fd/N, which reaches our own file
/// whatever its name now points at, and is only ever read.
package final class OutputFile {
    package let finalPath: String
    /// Nil for a plan (`--dry-run`): the muxer is set up to map the streams, and nothing is created.
    private let temp: TemporaryFile?
    private let overwrite: Bool
    package let format: UnsafeMutablePointer<AVFormatContext>
    private var opened = false
    private var committed = false
    private var descriptorClosed = false
    private let lock = Locked(())
    /// Priming to skip at the start of tracks that start after 0 (EditListPatch); under `lock`.
    private var startSkips: [EditListPatch.Skip] = []

    package var tempPath: String { temp?.path ?? "" }

    /// `planOnly`: set up the muxer for mapping streams without creating any file (nor removing
    /// killed runs' temporaries): `--dry-run`. Such an output cannot be opened.
    /// `folder`: the output's folder already opened (walked below a root without following links: a
    /// batch's --out-dir); nil opens `path`'s folder. The temporary is made, and renamed to `path`'s
    /// name, relative to that folder's descriptor.
    package init(path: String, overwrite: Bool, codec: VideoCodec = .h264, planOnly: Bool = false,
                 folder: ContainedDirectory? = nil) throws {
        finalPath = path
        self.overwrite = overwrite
        let (dir, base) = splitPath(path)
        let oformat = try OutputFile.format(for: path, codec: codec)
        if folder == nil && !isDirectory(dir) { throw GPUEncodeError(.outputCreate, path: path, "directory \(dir) does not exist") }
        if planOnly {
            // The run creates its temporary here: made and removed at once, so that a folder the
            // run could not write in is the plan's error too, with the run's words.
            let probe = try TemporaryFile(in: folder ?? ContainedDirectory(root: dir), for: path)
            _ = probe.close()
            probe.remove()
            temp = nil
            var ctx: UnsafeMutablePointer<AVFormatContext>?
            guard avformat_alloc_output_context2(&ctx, oformat, nil, path) >= 0, let ctx else {
                throw GPUEncodeError(.internal, path: path, "cannot set up the muxer")
            }
            format = ctx
            return
        }
        // Temporaries of killed runs (dead PIDs) in this folder go first; a live run's stay.
        let directory = try folder ?? ContainedDirectory(root: dir)
        TemporaryFile.removeStale(in: directory, legacyBase: base)
        let temp = try TemporaryFile(in: directory, for: path)
        self.temp = temp
        let byDescriptor = "/proc/self/fd/\(temp.fd)"
        // Without /proc (an unusual container), faststart re-reads by the temporary's name: a read,
        // so at worst a file swapped in by someone who may delete ours spoils our own output.
        let url = access(byDescriptor, R_OK) == 0 ? byDescriptor : temp.path
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let rc = avformat_alloc_output_context2(&ctx, oformat, nil, url)
        guard rc >= 0, let ctx else {
            _ = temp.close()
            temp.remove()
            throw GPUEncodeError(.internal, path: path, "cannot set up the muxer: \(averrorString(rc))")
        }
        format = ctx
    }

    /// The extensions a video may be written to, and the codecs each holds.
    package static let containers: [(ext: String, codecs: [VideoCodec])] = [
        ("mp4", [.h264, .hevc, .av1]), ("m4v", [.h264, .hevc, .av1]), ("mov", [.h264, .hevc]),
        ("mkv", [.h264, .hevc, .av1]), ("webm", [.av1]),
    ]

    /// The extensions that can hold `codec`, as ".mp4, .m4v or .mkv".
    package static func extensions(for codec: VideoCodec) -> String {
        let list = containers.filter { $0.codecs.contains(codec) }.map { "." + $0.ext }
        return list.count < 2 ? list.joined() : list.dropLast().joined(separator: ", ") + " or " + list.last!
    }

    /// The muxer for `path`'s extension, checked to hold `codec`: FFmpeg's own answer
    /// (avformat_query_codec) and what it does not say: its mov muxer refuses AV1 when writing the
    /// header ("only supported in MP4"), and WebM holds VP8, VP9 and AV1 only. `.m4v` is FFmpeg's
    /// ipod muxer for H.264 (as ffmpeg picks it) and its mp4 muxer for HEVC and AV1, which the ipod
    /// muxer has no tag for. A usage error (64) otherwise, before anything is opened.
    package static func format(for path: String, codec: VideoCodec) throws -> UnsafePointer<AVOutputFormat> {
        let ext = pathExtension(path).lowercased()
        guard let guessed = av_guess_format(nil, path, nil) else {
            throw GPUEncodeError(.usage, path: path, "unknown output format for extension \".\(ext)\" (use .mp4, .m4v, .mov, .mkv, or .webm for AV1)")
        }
        var oformat = guessed
        if String(cString: guessed.pointee.name) == "ipod" && codec != .h264, let mp4 = av_guess_format("mp4", nil, nil) { oformat = mp4 }
        let known = containers.first { $0.ext == ext }
        guard avformat_query_codec(oformat, codec.codecID, FF_COMPLIANCE_NORMAL) == 1, known?.codecs.contains(codec) ?? true else {
            let others = (known?.codecs ?? []).map { "--codec \($0.rawValue)" }
            let alternative = others.isEmpty ? "" : ", or \(others.joined(separator: " or "))"
            throw GPUEncodeError(.usage, path: path, "\(ext.isEmpty ? "this format" : "." + ext) cannot hold \(codec.displayName) video (--codec \(codec.rawValue)); use \(extensions(for: codec))\(alternative)")
        }
        return oformat
    }

    deinit {
        if opened { _ = gpuencode_avio_close_fd(format.pointee.pb); format.pointee.pb = nil }
        avformat_free_context(format)
        if !descriptorClosed { _ = temp?.close() }
        if !committed { temp?.remove() }
    }

    package var isMP4Family: Bool {
        let name = String(cString: format.pointee.oformat.pointee.name)
        return ["mp4", "mov", "ipod", "3gp", "3g2", "psp", "ismv", "f4v"].contains(name)
    }

    /// Matroska or WebM (FFmpeg's matroska and webm muxers): no edit list, millisecond ticks.
    package var isMatroska: Bool {
        let name = String(cString: format.pointee.oformat.pointee.name)
        return name.contains("matroska") || name.contains("webm")
    }

    package func canHold(_ codec: AVCodecID) -> Bool {
        avformat_query_codec(format.pointee.oformat, codec, FF_COMPLIANCE_NORMAL) == 1
    }

    /// What a copied stream's packets need added (in `timeBase`, the output stream's) so this muxer
    /// stores them where they play: FFmpeg 5.1's Matroska muxer writes Opus's CodecDelay (the
    /// pre-skip, `initial_padding`) but does not move the blocks by it, and its demuxer subtracts it
    /// from them; without this a copied Opus stream comes back 6.5 ms early on every pass (and one
    /// at 0 pushes every stream 7 ms later). The re-encode path does the same (AudioTranscoder).
    /// `timeBase` must be the one the muxer chose, known only once the header is written (Matroska
    /// makes every stream's 1/1000): 312 samples taken for 312 ticks of 1/1000 put a copied Opus
    /// stream from MP4 0.3 s late.
    package func copiedBlockOffset(_ par: UnsafeMutablePointer<AVCodecParameters>, timeBase: AVRational) -> Int64 {
        guard par.pointee.codec_id == AV_CODEC_ID_OPUS, par.pointee.initial_padding > 0,
              isMatroska, avformat_version() < (60 << 16) else { return 0 }
        return av_rescale_q(Int64(par.pointee.initial_padding), AVRational(num: 1, den: 48000), timeBase)
    }

    package func addStream() throws -> UnsafeMutablePointer<AVStream> {
        guard let s = avformat_new_stream(format, nil) else { throw GPUEncodeError(.internal, path: finalPath, "out of memory") }
        return s
    }

    /// Timescale of the MP4 movie header, where edit lists (start offsets) are counted. The
    /// default 1000 rounds a 0.083417 s video start to 0.083; the video's own timescale keeps it exact.
    package var movieTimescale: Int32?

    package func open() throws {
        guard let temp else { throw GPUEncodeError(.internal, path: finalPath, "a planned output is not written") }
        guard let pb = gpuencode_avio_open_fd(temp.fd) else { throw GPUEncodeError(.internal, path: finalPath, "out of memory") }
        format.pointee.pb = pb.assumingMemoryBound(to: AVIOContext.self)
        opened = true
        var options: OpaquePointer?
        if isMP4Family {
            av_dict_set(&options, "movflags", "+faststart", 0)
            if let t = movieTimescale { av_dict_set(&options, "movie_timescale", String(t), 0) }
        }
        defer { av_dict_free(&options) }
        try check(avformat_write_header(format, &options), .encode, path: finalPath, "cannot write the header")
    }

    /// Thread-safe: the audio copy and the video encoder both write here; the muxer interleaves.
    package func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try lock.withLock { _ in
            _ = try check(av_interleaved_write_frame(format, packet), .encode, path: finalPath, "write failed")
        }
    }

    /// Bytes muxed so far (the muxer's position in the file; the trailer and faststart's moved
    /// index come at the end), for progress: ffmpeg's total_size.
    package var bytesWritten: Int64 {
        lock.withLock { _ in
            guard let pb = format.pointee.pb else { return 0 }
            return max(0, avio_seek(pb, 0, SEEK_CUR))
        }
    }

    /// Asks `finish` to make the edit list of output stream `stream` (written with an empty edit and
    /// media time 0) skip its first `samples` (at `rate` per second): see EditListPatch.
    package func skipAtStart(stream: Int, samples: Int64, rate: Int64) {
        lock.withLock { _ in startSkips.append(.init(track: stream, samples: samples, rate: rate)) }
    }

    /// Writes the trailer (faststart moves the index to the front here) and renames into place.
    package func finish() throws {
        guard let temp else { throw GPUEncodeError(.internal, path: finalPath, "a planned output is not written") }
        try check(av_write_trailer(format), .encode, path: finalPath, "cannot finish the file")
        let writeError = gpuencode_avio_close_fd(format.pointee.pb)
        format.pointee.pb = nil
        opened = false
        try check(writeError, .encode, path: finalPath, "cannot write the file")
        let skips = lock.withLock { _ in startSkips }
        if isMP4Family && !skips.isEmpty { try EditListPatch.apply(fd: temp.fd, skips: skips, path: finalPath) }
        descriptorClosed = true
        guard temp.close() else { throw GPUEncodeError(.encode, path: finalPath, "cannot close the file: \(errnoString())") }
        // Whatever happens now, the temporary is either the output or gone (commit removes it).
        committed = true
        try temp.commit(to: finalPath, overwrite: overwrite)
    }
}

/// Whether the container `path`'s extension names can hold `codec` video: a usage error (64) naming
/// both when not (H.264 or HEVC in .webm, AV1 in .mov), so a run or a batch stops before any work.
public func checkOutputContainer(path: String, codec: VideoCodec) throws {
    _ = try OutputFile.format(for: path, codec: codec)
}
