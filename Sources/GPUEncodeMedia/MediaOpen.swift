import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings
import CShim

/// Opening a movie named on the command line or in a preset: always as a local file, never as a
/// URL. libavformat would otherwise read `concat:a.mp4|b.mp4` through its concat protocol and
/// `http://...` over the network, and demuxers such as HLS open further URLs named inside a file;
/// the shim prefixes `file:` and whitelists only the file protocol (so nested references stay local
/// too). FIFOs stay allowed (piping into gpuencode is legitimate); a signal while one blocks in open
/// or read stops the call through libavformat's interrupt callback and is reported as interrupted.
package enum MediaInput {
    /// Demuxers that accept almost any bytes and make a "video" of them: text shown as ANSI art
    /// (`tty` takes any .txt), binary text-mode art, raw data.
    package static let textDemuxers: Set<String> = ["tty", "bin", "xbin", "adf", "idf", "data"]
    /// Video "codecs" that render text rather than pictures.
    package static let textCodecs: Set<String> = ["ansi", "bintext", "xbin", "idf"]

    /// The opened container; errors are input errors (66), or interrupted (128 + signal).
    package static func open(_ path: String) throws -> UnsafeMutablePointer<AVFormatContext> {
        var raw: UnsafeMutableRawPointer? = nil
        let rc = gpuencode_open_input_file(&raw, path)
        guard rc >= 0, let raw else {
            let signal = gpuencode_interrupt_signal()
            if signal != 0 || rc == gpuencode_averror_exit() {
                throw GPUEncodeError(.interrupted(signal: signal), path: path, "interrupted while opening the input")
            }
            let reason = rc == AVERROR_INVALIDDATA_VALUE ? "not a media file libavformat can read" : averrorString(rc)
            throw GPUEncodeError(.input, path: path, reason)
        }
        let ctx = raw.assumingMemoryBound(to: AVFormatContext.self)
        if let format = ctx.pointee.iformat, textDemuxers.contains(String(cString: format.pointee.name)) {
            let name = String(cString: format.pointee.name)
            var c: UnsafeMutablePointer<AVFormatContext>? = ctx
            avformat_close_input(&c)
            throw GPUEncodeError(.input, path: path, "not a media file (FFmpeg's \(name) demuxer would show its bytes as text art)")
        }
        return ctx
    }

    /// The error to report when a call failed because a signal arrived (nil when none did).
    package static func interruption(path: String) -> GPUEncodeError? {
        let signal = gpuencode_interrupt_signal()
        return signal == 0 ? nil : GPUEncodeError(.interrupted(signal: signal), path: path, "interrupted while reading the input")
    }

    /// Refuses a video stream whose codec draws text (see `textCodecs`).
    package static func checkCodec(_ id: AVCodecID, path: String) throws {
        let name = String(cString: avcodec_get_name(id))
        if textCodecs.contains(name) {
            throw GPUEncodeError(.input, path: path, "not a media file (its \"video\" is \(name) text art)")
        }
    }
}
