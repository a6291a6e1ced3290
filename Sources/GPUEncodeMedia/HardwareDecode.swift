import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings
import CShim

/// NVDEC decoding through FFmpeg's cuda hwaccel. The decoder gets a CUDA device and a get_format
/// callback (CShim) choosing AV_PIX_FMT_CUDA. Decoded frames either stay in CUDA memory
/// (`keepsFramesOnGPU`: the GPU stage copies them into its textures through CUDA-GL interop) or are
/// downloaded to system memory (NV12, or P010 for 10-bit), which the GPU stage converts to its
/// working format like any other format it does not read directly. A stream NVDEC declines (an
/// unsupported profile) is decoded in software by the same decoder, with a warning.
package final class HardwareDecoder {
    /// Hand out CUDA frames as they are instead of downloading them. Set before the first frame
    /// by whoever knows that the frames go to a GPU stage that can take them.
    package var keepsFramesOnGPU = false
    private let device: UnsafeMutablePointer<AVBufferRef>
    /// What NVDEC hands out (a CUDA surface), before its download.
    private let hwFrame = Frame()
    private let path: String
    private let log: @Sendable (LogLevel, String) -> Void
    private var noted = false

    /// Called before `avcodec_open2`. Returns nil (software decoding) for `.none`, and for `.auto`
    /// when the codec has no cuda hwaccel or no CUDA device can be created; `.cuda` throws then.
    package static func attach(_ mode: HardwareAcceleration, to decoder: UnsafeMutablePointer<AVCodecContext>,
                       codec: UnsafePointer<AVCodec>, path: String, device cuda: CUDADevice,
                       log: @escaping @Sendable (LogLevel, String) -> Void) throws -> HardwareDecoder? {
        if mode == .none { return nil }
        let codecName = String(cString: codec.pointee.name)
        guard hasCUDAConfig(codec) else {
            if mode == .cuda {
                throw GPUEncodeError(.gpu, path: path, "--hwaccel cuda: FFmpeg has no NVDEC (cuda) decoding for \(codecName) video; use --hwaccel auto or none")
            }
            log(.info, "NVDEC not used: FFmpeg has no cuda hwaccel for \(codecName)")
            return nil
        }
        let (reference, rc) = cuda.reference()
        guard let device = reference else {
            if mode == .cuda {
                throw GPUEncodeError(.gpu, path: path, "--hwaccel cuda: no CUDA device for NVDEC (FFmpeg: \(averrorString(rc))); it needs an NVIDIA GPU and driver (--hwaccel auto falls back to software)")
            }
            log(.info, "NVDEC not used: no CUDA device (FFmpeg: \(averrorString(rc)))")
            return nil
        }
        decoder.pointee.hw_device_ctx = av_buffer_ref(device)
        gpuencode_use_cuda_get_format(UnsafeMutableRawPointer(decoder))
        // NVDEC does the decoding; frame threads would only hold more surfaces (FFmpeg adds one
        // per thread and NVDEC allows 32).
        decoder.pointee.thread_count = 1
        log(.info, "decoder: \(codecName) on NVDEC (FFmpeg cuda hwaccel)")
        return HardwareDecoder(device: device, path: path, log: log)
    }

    /// Whether FFmpeg can decode `codec` through the cuda hwaccel with a device context.
    package static func hasCUDAConfig(_ codec: UnsafePointer<AVCodec>) -> Bool {
        var i: Int32 = 0
        while let config = avcodec_get_hw_config(codec, i) {
            if config.pointee.device_type == AV_HWDEVICE_TYPE_CUDA
                && config.pointee.methods & Int32(AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) != 0 {
                return true
            }
            i += 1
        }
        return false
    }

    private init(device: UnsafeMutablePointer<AVBufferRef>, path: String, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.device = device
        self.path = path
        self.log = log
    }

    deinit {
        var d: UnsafeMutablePointer<AVBufferRef>? = device
        av_buffer_unref(&d)
    }

    /// `avcodec_receive_frame`, with a CUDA frame downloaded into `frame` (timestamps and colour
    /// properties kept). Returns FFmpeg's code.
    package func receive(from decoder: UnsafeMutablePointer<AVCodecContext>, into frame: UnsafeMutablePointer<AVFrame>) -> Int32 {
        let hwFrame = self.hwFrame.pointer
        let rc = avcodec_receive_frame(decoder, hwFrame)
        if rc < 0 { return rc }
        defer { av_frame_unref(hwFrame) }
        guard hwFrame.pointee.format == AV_PIX_FMT_CUDA.rawValue else {
            if !noted {
                noted = true
                log(.warning, "\(path): NVDEC cannot decode this stream (\(profileName(decoder))); decoding in software")
            }
            av_frame_move_ref(frame, hwFrame)
            return 0
        }
        if keepsFramesOnGPU {
            if !noted {
                noted = true
                log(.info, "decoder: NVDEC frames stay in CUDA memory (\(HardwareDecoder.surfaceFormatName(hwFrame))) for the GPU stage")
            }
            av_frame_move_ref(frame, hwFrame)
            return 0
        }
        let copied = HardwareDecoder.download(hwFrame, into: frame)
        if copied < 0 {
            log(.warning, "\(path): downloading an NVDEC frame failed: \(averrorString(copied))")
            return copied
        }
        if !noted {
            noted = true
            log(.info, "decoder: NVDEC frames arrive in CUDA memory and are downloaded as \(HardwareDecoder.surfaceFormatName(hwFrame))")
        }
        return 0
    }

    /// Copies a CUDA frame into system memory (`frame`, in the surface's format: NV12, P010 or
    /// P016), timestamps and colour properties kept. Returns FFmpeg's code; `frame` is empty on failure.
    package static func download(_ hwFrame: UnsafeMutablePointer<AVFrame>, into frame: UnsafeMutablePointer<AVFrame>) -> Int32 {
        var copied = av_hwframe_transfer_data(frame, hwFrame, 0)
        if copied >= 0 { copied = av_frame_copy_props(frame, hwFrame) }
        if copied < 0 { av_frame_unref(frame) }
        return copied
    }

    /// The format of a CUDA frame's samples (its frames context's software format), e.g. NV12.
    package static func surfaceFormat(_ hwFrame: UnsafePointer<AVFrame>) -> AVPixelFormat {
        guard let frames = hwFrame.pointee.hw_frames_ctx?.pointee.data else { return AV_PIX_FMT_NONE }
        return frames.withMemoryRebound(to: AVHWFramesContext.self, capacity: 1) { $0.pointee.sw_format }
    }

    package static func surfaceFormatName(_ hwFrame: UnsafePointer<AVFrame>) -> String {
        av_get_pix_fmt_name(surfaceFormat(hwFrame)).map { String(cString: $0) } ?? "?"
    }

    private func profileName(_ decoder: UnsafeMutablePointer<AVCodecContext>) -> String {
        let d = decoder.pointee
        let profile = avcodec_profile_name(d.codec_id, d.profile).map { String(cString: $0) } ?? "profile \(d.profile)"
        let format = av_get_pix_fmt_name(d.sw_pix_fmt).map { String(cString: $0) } ?? ""
        return format.isEmpty ? profile : "\(profile), \(format)"
    }
}
