import CFFmpeg
import Glibc

/// The output container, written to a hidden temporary file beside the target and renamed into
/// place only when complete, so a failure or Ctrl-C never leaves a partial file behind.
final class OutputFile {
    let finalPath: String
    let tempPath: String
    let format: UnsafeMutablePointer<AVFormatContext>
    private var opened = false
    private var committed = false
    private let lock = Locked(())

    init(path: String) throws {
        finalPath = path
        let (dir, base) = splitPath(path)
        guard let oformat = av_guess_format(nil, path, nil) else {
            throw GPUEncodeError(.usage, path: path, "unknown output format for extension \".\(pathExtension(path))\" (use .mp4, .m4v, .mov or .mkv)")
        }
        guard avformat_query_codec(oformat, AV_CODEC_ID_H264, FF_COMPLIANCE_NORMAL) == 1 else {
            throw GPUEncodeError(.usage, path: path, "the \(String(cString: oformat.pointee.name)) format cannot hold H.264 video (use .mp4, .m4v, .mov or .mkv)")
        }
        guard isDirectory(dir) else { throw GPUEncodeError(.outputCreate, path: path, "directory \(dir) does not exist") }
        tempPath = "\(dir)/.\(base).\(getpid()).partial"
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try check(avformat_alloc_output_context2(&ctx, oformat, nil, tempPath), .internal, path: path, "cannot set up the muxer")
        format = ctx!
    }

    deinit {
        if opened && !committed { avio_closep(&format.pointee.pb) }
        avformat_free_context(format)
        if !committed { unlink(tempPath) }
    }

    var isMP4Family: Bool {
        let name = String(cString: format.pointee.oformat.pointee.name)
        return ["mp4", "mov", "ipod", "3gp", "3g2", "psp", "ismv", "f4v"].contains(name)
    }

    func canHold(_ codec: AVCodecID) -> Bool {
        avformat_query_codec(format.pointee.oformat, codec, FF_COMPLIANCE_NORMAL) == 1
    }

    func addStream() throws -> UnsafeMutablePointer<AVStream> {
        guard let s = avformat_new_stream(format, nil) else { throw GPUEncodeError(.internal, path: finalPath, "out of memory") }
        return s
    }

    /// Timescale of the MP4 movie header, where edit lists (start offsets) are counted. The
    /// default 1000 rounds a 0.083417 s video start to 0.083; the video's own timescale keeps it exact.
    var movieTimescale: Int32?

    func open() throws {
        let rc = avio_open(&format.pointee.pb, tempPath, AVIO_FLAG_WRITE)
        guard rc >= 0 else {
            throw GPUEncodeError(.outputCreate, path: finalPath, "cannot create a file in \(splitPath(finalPath).dir): \(averrorString(rc))")
        }
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
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws {
        try lock.withLock { _ in
            _ = try check(av_interleaved_write_frame(format, packet), .encode, path: finalPath, "write failed")
        }
    }

    /// Writes the trailer (faststart moves the index to the front here) and renames into place.
    func finish() throws {
        try check(av_write_trailer(format), .encode, path: finalPath, "cannot finish the file")
        try check(avio_closep(&format.pointee.pb), .encode, path: finalPath, "cannot close the file")
        guard rename(tempPath, finalPath) == 0 else {
            throw GPUEncodeError(.encode, path: finalPath, "cannot move the finished file into place: \(errnoString())")
        }
        committed = true
    }
}
