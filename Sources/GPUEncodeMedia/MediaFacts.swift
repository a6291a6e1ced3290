import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings
import Glibc

/// What the report says about a file: read from its container (no decoding), so it is cheap.
public struct MediaFacts: Sendable {
    /// Seconds: the video stream's duration, else the container's.
    public var duration: Double?
    /// The video stream's frame count as the container states it (nil when it does not).
    public var frames: Int?
    public var videoStart: Double?
    public var audioStart: Double?
    public var bytes: Int64?

    /// Audio start minus video start, in seconds (nil without audio).
    public var avOffset: Double? {
        guard let a = audioStart, let v = videoStart else { return nil }
        return a - v
    }

    /// Average bits per second over the duration.
    public var bitrate: Double? {
        guard let b = bytes, let d = duration, d > 0 else { return nil }
        return Double(b) * 8 / d
    }

    /// Nil when the file cannot be opened (the report then has nulls; the job's own error says why).
    public static func probe(_ path: String) -> MediaFacts? {
        guard let c = try? MediaInput.open(path) else { return nil }
        var ctx: UnsafeMutablePointer<AVFormatContext>? = c
        defer { avformat_close_input(&ctx) }
        guard avformat_find_stream_info(c, nil) >= 0 else { return nil }
        var facts = MediaFacts()
        facts.bytes = FileStamp(path)?.size
        let v = av_find_best_stream(c, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        let a = av_find_best_stream(c, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        func start(_ i: Int32) -> Double? {
            guard i >= 0, let s = c.pointee.streams[Int(i)] else { return nil }
            return s.pointee.start_time != AV_NOPTS ? seconds(s.pointee.start_time, s.pointee.time_base) : nil
        }
        facts.videoStart = start(v)
        facts.audioStart = start(a)
        if v >= 0, let s = c.pointee.streams[Int(v)] {
            if s.pointee.duration > 0 && s.pointee.duration != AV_NOPTS { facts.duration = seconds(s.pointee.duration, s.pointee.time_base) }
            if s.pointee.nb_frames > 0 { facts.frames = Int(s.pointee.nb_frames) }
        }
        if facts.duration == nil, c.pointee.duration > 0, c.pointee.duration != AV_NOPTS {
            facts.duration = Double(c.pointee.duration) / Double(AV_TIME_BASE)
        }
        return facts
    }
}
