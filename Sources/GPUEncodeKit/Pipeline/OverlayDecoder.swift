import CFFmpeg

/// A second video as a filter's picture (the `video` generator): opened once per run on the thread
/// that renders, decoded forward as the output's time advances, sought back when it loops or when
/// asked for an earlier time (previews). It holds two decoded frames (the one shown and the next
/// one, whose start ends the shown one's interval) and one RGBA copy of the shown frame.
///
/// Frames are chosen by timestamp, not by count: at overlay time u the frame shown is the one
/// whose presentation interval [its pts, the next frame's pts) contains u, so variable frame rates
/// and rates unlike the main video's work. The last frame lasts its own duration; that end is the
/// loop's length. Overlay time 0 is the first frame's timestamp.
///
/// The shown frame goes to RGBA8 with swscale on the CPU, only when it changes. That is a copy
/// per overlay frame of the overlay's own size (overlays are usually small: light leaks, a logo
/// animation, a picture-in-picture clip), and it reads every pixel format FFmpeg decodes, alpha
/// included, with the stream's own matrix and range. The display matrix (rotation) is not applied.
final class OverlayDecoder: DynamicSource {
    let path: String
    let width: Int
    let height: Int
    private let input: VideoSource
    private let timeBase: AVRational
    /// The first frame's timestamp: overlay time 0.
    private var origin: Int64 = 0
    private let loop: Bool
    private let offset: Double
    /// A frame's length when the stream does not say (1 / the average frame rate).
    private let defaultDuration: Double

    private var shown = Frame()
    private var following = Frame()
    private var hasShown = false
    private var hasFollowing = false
    /// Seconds of overlay time where `shown` and `following` start.
    private var shownStart = 0.0
    private var followingStart = 0.0
    /// The end of the last frame, once the decoder has reached it: the loop's length.
    private(set) var length: Double? = nil

    private var scaler: OpaquePointer? = nil
    private var rgba: [UInt8]
    private var converted: Int64? = nil
    private let clear: [UInt8]
    private let premultiply: Bool

    /// Opens the file and decodes its first frame (so a file that cannot be read fails here).
    init(path: String, loop: Bool = true, offset: Double = 0) throws {
        self.path = path
        self.loop = loop
        self.offset = offset
        // Audio and other streams are not read at all.
        input = try VideoSource(path: path, threads: 1, videoOnly: true)
        let stream = input.videoStream
        timeBase = stream.pointee.time_base
        let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        defaultDuration = rate.num > 0 && rate.den > 0 ? 1 / av_q2d(rate) : 1.0 / 25
        let dec = input.decoder.pointee
        width = Int(dec.width)
        height = Int(dec.height)
        let format = dec.pix_fmt
        premultiply = av_pix_fmt_desc_get(format).map { $0.pointee.flags & UInt64(AV_PIX_FMT_FLAG_ALPHA) != 0 } ?? false
        rgba = [UInt8](repeating: 0, count: max(1, width * height * 4))
        clear = [UInt8](repeating: 0, count: max(1, width * height * 4))
        guard width > 0 && height > 0, let first = next() else {
            throw GPUEncodeError(.input, path: path, "no video frame could be decoded")
        }
        shown = first
        let ts = shown.bestEffortTimestamp
        origin = ts == AV_NOPTS ? 0 : ts
        hasShown = true
        shownStart = 0
        hasFollowing = receiveFollowing()
    }

    deinit {
        sws_freeContext(scaler)
    }

    func frame(at time: Double) -> DynamicFrame {
        let u = time - offset
        guard u >= 0, locate(u) else { return clear.withUnsafeBytes { DynamicFrame(serial: Int64.min, pixels: $0.baseAddress!) } }
        // Times come from the overlay file's timestamps, which a damaged file may make huge.
        let key = shown.bestEffortTimestamp == AV_NOPTS ? Int64(inRange: shownStart * 1e6) ?? Int64.max : shown.bestEffortTimestamp
        if key != converted {
            convert()
            converted = key
        }
        return rgba.withUnsafeBytes { DynamicFrame(serial: key, pixels: $0.baseAddress!) }
    }

    /// The overlay time of a decoded frame, seconds from the first frame.
    private func start(of f: Frame, after previous: Double?) -> Double {
        let ts = f.bestEffortTimestamp
        if ts == AV_NOPTS { return (previous ?? -defaultDuration) + defaultDuration }
        return seconds(ts - origin, timeBase)
    }

    private func duration(of f: Frame) -> Double {
        f.duration > 0 ? seconds(f.duration, timeBase) : defaultDuration
    }

    /// Makes `shown` the frame whose interval contains overlay time `u`; false when nothing
    /// could be decoded (the picture is then transparent).
    private func locate(_ time: Double) -> Bool {
        var u = time
        if loop, let length, u >= length { u = u.truncatingRemainder(dividingBy: length) }
        if !hasShown || u < shownStart { seek(to: u) }
        guard hasShown else { return false }
        // Bounded: each round either returns or wraps u below the length and seeks.
        for _ in 0..<3 {
            while hasFollowing && followingStart <= u {
                swap(&shown, &following)
                shownStart = followingStart
                hasFollowing = receiveFollowing()
            }
            if hasFollowing || !loop { return true }
            let end = length ?? shownStart + duration(of: shown)
            if u < end { return true }
            u = end > 0 ? u.truncatingRemainder(dividingBy: end) : 0
            seek(to: u)
            guard hasShown else { return false }
        }
        return true
    }

    /// Decodes the frame after `shown` into `following`; at the end of the stream, records the length.
    private func receiveFollowing() -> Bool {
        while let frame = next() {
            let t = start(of: frame, after: shownStart)
            // A frame that does not move time forward (a damaged timestamp) is skipped.
            if t > shownStart {
                following = frame
                followingStart = t
                return true
            }
        }
        if length == nil { length = shownStart + duration(of: shown) }
        return false
    }

    /// Restarts decoding at the last key frame at or before `u`, then decodes up to it.
    private func seek(to u: Double) {
        func restart(_ target: Double) {
            // Checked: a tiny time base or a huge origin from a damaged file must not trap.
            let steps = Int64(inRange: (target / av_q2d(timeBase)).rounded(.down)) ?? 0
            let (sum, overflow) = origin.addingReportingOverflow(steps)
            let ts = overflow ? origin : sum
            if !input.seek(to: ts) { input.seek(to: origin) }
            let first = next()
            hasShown = first != nil
            if let first { shown = first }
            shownStart = hasShown ? start(of: shown, after: nil) : 0
            hasFollowing = hasShown && receiveFollowing()
        }
        restart(u)
        // Some demuxers land after the target; the start is always a key frame.
        if hasShown && shownStart > u + 1e-6 && u > 0 { restart(0) }
    }

    /// The decoder's next frame; nil at the end. A damaged packet or frame is skipped (the decoder
    /// carries on); a read error ends the stream, so a broken overlay holds its last good frame.
    private func next() -> Frame? {
        (try? input.nextFrame()) ?? nil
    }

    /// `shown` as premultiplied RGBA8 of the first frame's size.
    private func convert() {
        let f = shown.pointer.pointee
        let format = AVPixelFormat(rawValue: f.format)
        scaler = sws_getCachedContext(scaler, f.width, f.height, format, Int32(width), Int32(height), AV_PIX_FMT_RGBA,
                                      SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nil, nil, nil)
        guard let scaler else { return }
        if let desc = av_pix_fmt_desc_get(format), desc.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 {
            // The stream's own matrix (untagged: BT.601, as swscale and the main video assume) and range.
            let full = f.color_range == AVCOL_RANGE_JPEG
                || [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P].contains(format)
            let matrix = sws_getCoefficients(Int32(f.colorspace.rawValue))
            sws_setColorspaceDetails(scaler, matrix, full ? 1 : 0, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
        }
        let srcData: [UnsafePointer<UInt8>?] = [f.data.0, f.data.1, f.data.2, f.data.3].map { $0.map { UnsafePointer($0) } }
        let srcStride = [f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3]
        let rowBytes = Int32(width * 4)
        rgba.withUnsafeMutableBufferPointer { buffer in
            let dst: [UnsafeMutablePointer<UInt8>?] = [buffer.baseAddress, nil, nil, nil]
            _ = sws_scale(scaler, srcData, srcStride, 0, f.height, dst, [rowBytes, 0, 0, 0])
            guard premultiply else { return }
            // Premultiplied, so bilinear filtering does not pull colour out of transparent pixels.
            for i in stride(from: 0, to: buffer.count, by: 4) {
                let a = UInt32(buffer[i + 3])
                if a == 255 { continue }
                for c in 0..<3 { buffer[i + c] = UInt8((UInt32(buffer[i + c]) * a + 127) / 255) }
            }
        }
    }
}
