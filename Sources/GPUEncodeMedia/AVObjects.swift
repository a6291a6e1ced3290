import GPUEncodeCore

import CFFmpeg

/// An AVFrame this object owns: freed when the last reference goes, so no code path (an early
/// return, a thrown error, a queue closed with frames still in it) has to remember av_frame_free.
/// Frames move between the pipeline's threads through queues; one thread uses a frame at a time.
/// The GPU fills an output frame's planes as a `PlaneBuffer`.
public final class Frame: PlaneBuffer, @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<AVFrame>

    /// A new empty frame (av_frame_alloc). Allocation failing is out of memory: trapping there
    /// would be what Swift does for its own allocations too.
    public init() {
        pointer = av_frame_alloc()!
    }

    /// Takes ownership of a frame allocated elsewhere (a frame pool, a converter).
    package init(taking frame: UnsafeMutablePointer<AVFrame>) {
        pointer = frame
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&f)
    }

    /// Drops the buffers, keeping the AVFrame for the next decode.
    package func unref() { av_frame_unref(pointer) }

    package var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
    }

    /// The frame's length in its stream's time base (FFmpeg 5.1's `pkt_duration`): the encoder
    /// drops it, so the packet's duration is restored from here.
    package var duration: Int64 {
        get { pointer.pointee.pkt_duration }
        set { pointer.pointee.pkt_duration = newValue }
    }

    package var width: Int32 {
        get { pointer.pointee.width }
        set { pointer.pointee.width = newValue }
    }

    package var height: Int32 {
        get { pointer.pointee.height }
        set { pointer.pointee.height = newValue }
    }

    package var pixelFormat: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }

    /// The two fields of an interlaced picture, woven (FFmpeg 5.1's `interlaced_frame`); the
    /// decoder sets it, and libx264 codes a frame so flagged as fields when encoding interlaced.
    package var interlaced: Bool {
        get { pointer.pointee.interlaced_frame != 0 }
        set { pointer.pointee.interlaced_frame = newValue ? 1 : 0 }
    }

    /// Of an interlaced frame: the top field is shown first (`top_field_first`).
    package var topFieldFirst: Bool {
        get { pointer.pointee.top_field_first != 0 }
        set { pointer.pointee.top_field_first = newValue ? 1 : 0 }
    }

    /// Takes `original`'s timestamp, length and field order: a converted copy (swscale) has none
    /// of them, and deinterlacing and interlaced encoding need the fields later.
    package func keepFields(of original: Frame) {
        guard original !== self else { return }
        pts = original.pts
        duration = original.duration
        interlaced = original.interlaced
        topFieldFirst = original.topFieldFirst
    }

    /// The decoder's best guess at the frame's presentation time (AV_NOPTS when it has none).
    package var bestEffortTimestamp: Int64 { pointer.pointee.best_effort_timestamp }

    /// The planes of a planar or semi-planar frame (3 for yuv420p, 2 for NV12), for the GPU.
    public var planes: [Plane] {
        let f = pointer.pointee
        let count = Int(av_pix_fmt_count_planes(AVPixelFormat(rawValue: f.format)))
        let data = [f.data.0, f.data.1, f.data.2]
        let strides = [f.linesize.0, f.linesize.1, f.linesize.2]
        return (0..<min(count, 3)).map { Plane(data: data[$0]!, stride: Int(strides[$0])) }
    }
}

/// An AVPacket this object owns (see Frame).
public final class Packet: @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<AVPacket>

    public init() {
        pointer = av_packet_alloc()!
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&p)
    }

    package func unref() { av_packet_unref(pointer) }

    package var streamIndex: Int { Int(pointer.pointee.stream_index) }

    package var pts: Int64 { pointer.pointee.pts }
}
