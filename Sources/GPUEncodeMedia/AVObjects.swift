import CFFmpeg

/// An AVFrame this object owns: freed when the last reference goes, so no code path (an early
/// return, a thrown error, a queue closed with frames still in it) has to remember av_frame_free.
/// Frames move between the pipeline's threads through queues; one thread uses a frame at a time.
public final class Frame: @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<AVFrame>

    /// A new empty frame (av_frame_alloc). Allocation failing is out of memory: trapping there
    /// would be what Swift does for its own allocations too.
    public init() {
        pointer = av_frame_alloc()!
    }

    /// Takes ownership of a frame allocated elsewhere (a frame pool, a converter).
    init(taking frame: UnsafeMutablePointer<AVFrame>) {
        pointer = frame
    }

    deinit {
        var f: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&f)
    }

    /// Drops the buffers, keeping the AVFrame for the next decode.
    func unref() { av_frame_unref(pointer) }

    var pts: Int64 {
        get { pointer.pointee.pts }
        set { pointer.pointee.pts = newValue }
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

    func unref() { av_packet_unref(pointer) }

    /// A new reference to the same data (av_packet_ref), for a packet that must outlive the next read.
    func clone() -> Packet? {
        let copy = Packet()
        return av_packet_ref(copy.pointer, pointer) < 0 ? nil : copy
    }

    var streamIndex: Int { Int(pointer.pointee.stream_index) }
}
