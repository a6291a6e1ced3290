import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings

/// Hands frames to the GPU in the run's working format. Frames already in it are passed on as
/// they are (no copy); only other formats (10-bit, RGB, a size change mid-stream) go through
/// swscale, the documented fallback, and frames a planned downscale makes smaller (scale first:
/// `Resampling.lanczos`).
package struct FrameConverter {
    /// How swscale resamples when the size changes.
    package enum Resampling: Sendable {
        /// Bicubic with accurate rounding and full chroma interpolation: the fallback's conversions.
        case bicubic
        /// Lanczos (3 taps a side), as ffmpeg's `scale=flags=lanczos`: a planned downscale (scale first).
        case lanczos

        var flags: Int32 {
            switch self {
            case .bicubic: return SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT
            // ffmpeg's own flags for `flags=lanczos`, so the picture is the one its filter makes.
            case .lanczos: return SWS_LANCZOS
            }
        }
    }

    package var resampling = Resampling.bicubic
    private var context: OpaquePointer?
    private var key: (Int32, Int32, Int32) = (0, 0, -1)

    package init() {}

    package func release() {
        sws_freeContext(context)
    }

    /// `frame` itself when it is in `format` at `width` x `height` already, else a converted copy
    /// (without the original's properties: the caller stamps what it needs). Nil when swscale fails.
    package mutating func convert(_ frame: Frame, to format: AVPixelFormat, width: Int, height: Int) -> Frame? {
        let f = frame.pointer.pointee
        if f.format == format.rawValue && Int(f.width) == width && Int(f.height) == height && f.linesize.0 > 0 {
            return frame
        }
        if key != (f.width, f.height, f.format) {
            sws_freeContext(context)
            context = makeContext(from: f, to: format, width: width, height: height)
            key = (f.width, f.height, f.format)
        }
        guard let context else { return nil }
        let converted = Frame()
        let out = converted.pointer
        out.pointee.width = Int32(width)
        out.pointee.height = Int32(height)
        out.pointee.format = format.rawValue
        guard av_frame_get_buffer(out, 0) >= 0 else { return nil }
        let srcData: [UnsafePointer<UInt8>?] = [f.data.0, f.data.1, f.data.2, f.data.3].map { $0.map { UnsafePointer($0) } }
        let srcStride = [f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3]
        let dstData = [out.pointee.data.0, out.pointee.data.1, out.pointee.data.2, out.pointee.data.3]
        let dstStride = [out.pointee.linesize.0, out.pointee.linesize.1, out.pointee.linesize.2, out.pointee.linesize.3]
        let rows = sws_scale(context, srcData, srcStride, 0, f.height, dstData, dstStride)
        guard rows > 0 else { return nil }
        return converted
    }

    /// The swscale context for frames like `f`. Lanczos (a planned downscale the GPU then reads as
    /// the source) is told the chroma siting the renderer assumes, MPEG-2's (left: co-sited with
    /// the even columns; centred between the rows), on both sides: swscale's default is centred
    /// both ways, which moves a left-sited picture's chroma by a fraction of a pixel when it
    /// scales. Positions are in 1/256 of a luma pixel.
    private func makeContext(from f: AVFrame, to format: AVPixelFormat, width: Int, height: Int) -> OpaquePointer? {
        guard resampling == .lanczos else {
            return sws_getContext(f.width, f.height, AVPixelFormat(rawValue: f.format), Int32(width), Int32(height), format,
                                  resampling.flags, nil, nil, nil)
        }
        guard let c = sws_alloc_context() else { return nil }
        let settings: [(String, Int64)] = [("srcw", Int64(f.width)), ("srch", Int64(f.height)), ("src_format", Int64(f.format)),
                                           ("dstw", Int64(width)), ("dsth", Int64(height)), ("dst_format", Int64(format.rawValue)),
                                           ("sws_flags", Int64(resampling.flags)),
                                           ("src_h_chr_pos", 0), ("src_v_chr_pos", 128), ("dst_h_chr_pos", 0), ("dst_v_chr_pos", 128)]
        for (name, value) in settings where av_opt_set_int(UnsafeMutableRawPointer(c), name, value, 0) < 0 {
            sws_freeContext(c)
            return nil
        }
        guard sws_init_context(c, nil, nil) >= 0 else {
            sws_freeContext(c)
            return nil
        }
        return c
    }
}
