import CFFmpeg
import GPUEncodeCore

/// The CUDA device context NVDEC decoders decode on: one for a single run, or one for many decoders
/// (a batch's jobs), made by the first decoder that asks and shared by the rest, each holding its
/// own reference. Every decoder gets its device here. On the H100 a CUDA context costs a few
/// hundred milliseconds to make and the driver makes them one at a time: 16 jobs each making their
/// own spent 6 s of a batch that software decoding finishes in 3 (docs/PERFORMANCE.md). FFmpeg's
/// decoders may share a device context; NVDEC sessions on one context run in parallel.
public final class CUDADevice: @unchecked Sendable {
    /// The device once made, or FFmpeg's code for why it could not be.
    private let state = Locked<(device: UnsafeMutablePointer<AVBufferRef>?, failure: Int32?)>((nil, nil))

    public init() {}

    deinit {
        state.withLock { s in
            var d = s.device
            av_buffer_unref(&d)
        }
    }

    /// A new reference to the device (the caller unrefs it), made on the first call; nil and
    /// FFmpeg's code when there is no CUDA device (asked once: later calls give the same answer).
    package func reference() -> (UnsafeMutablePointer<AVBufferRef>?, Int32) {
        state.withLock { s in
            if let failure = s.failure { return (nil, failure) }
            if s.device == nil {
                var made: UnsafeMutablePointer<AVBufferRef>?
                let rc = av_hwdevice_ctx_create(&made, AV_HWDEVICE_TYPE_CUDA, nil, nil, 0)
                guard rc >= 0, let made else {
                    s.failure = rc
                    return (nil, rc)
                }
                s.device = made
            }
            return (av_buffer_ref(s.device!), 0)
        }
    }
}
