import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings

// The format the GPU reads: planar Y'CbCr at the chroma subsampling of the source, 8 bits, or 10,
// 12 or 16 bits little endian (uploaded as 16-bit textures, never rounded to 8 bits on the CPU).
// Frames already in it are uploaded as decoded; others (RGB, big-endian or semi-planar formats such
// as NV12/P010 from NVDEC) are converted by swscale first, the one documented per-frame CPU
// conversion; it keeps a deep source's bits (P010 becomes yuv420p10le, a plain copy).

extension VideoSource {
    /// The planar format the GPU reads frames of `format` in, and the colour space to read them with;
    /// `width` x `height` (the coded size) decides an untagged matrix (`UntaggedMatrix`).
    package static func workingFormat(for format: AVPixelFormat, colorspace: AVColorSpace, range: AVColorRange,
                                      width: Int, height: Int) -> (AVPixelFormat, YUVColorSpace) {
        let native: [AVPixelFormat] = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P,
                                       AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUV440P, AV_PIX_FMT_YUVJ440P]
            + deepFormats.flatMap { $0 }
        let jpeg: [AVPixelFormat] = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUVJ440P]
        // Unspecified matrices are guessed from the size, as players guess them (BT.709 for HD);
        // other tags that are neither BT.709 nor BT.2020 are read as BT.601.
        let matrix: YUVMatrix
        switch colorspace {
        case AVCOL_SPC_BT709: matrix = .bt709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = .bt2020
        case _ where UntaggedMatrix.isUntagged(colorspace): matrix = UntaggedMatrix.guess(width: width, height: height)
        default: matrix = .bt601
        }
        let full = range == AVCOL_RANGE_JPEG || jpeg.contains(format)
        if native.contains(format) { return (format, YUVColorSpace(matrix: matrix, fullRange: full)) }
        guard let desc = av_pix_fmt_desc_get(format)?.pointee else {
            return (AV_PIX_FMT_YUV420P, YUVColorSpace(matrix: matrix, fullRange: full))
        }
        let isYUV = desc.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0 && desc.flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0 && desc.nb_components >= 3
        // Deep Y'CbCr keeps its depth (rounded up to 10, 12 or 16 bits); RGB, palette and grey
        // become 8 bits as before.
        let depth = Int(desc.comp.0.depth)
        let row = !isYUV || depth <= 8 ? nil : depth <= 10 ? 0 : depth <= 12 ? 1 : 2
        let column: Int
        switch (desc.log2_chroma_w, desc.log2_chroma_h) {
        case (0, 0): column = 2
        case (1, 0): column = 1
        default: column = 0
        }
        let target = row.map { deepFormats[$0][column] } ?? [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUV444P][column]
        // swscale turns RGB, palette and grey into limited-range BT.601 Y'CbCr; YUV keeps its values.
        return isYUV ? (target, YUVColorSpace(matrix: matrix, fullRange: full)) : (target, YUVColorSpace(matrix: .bt601, fullRange: false))
    }

    /// The deep planar formats the GPU reads natively: rows 10, 12 and 16 bits, columns 4:2:0, 4:2:2, 4:4:4.
    static let deepFormats: [[AVPixelFormat]] = [
        [AV_PIX_FMT_YUV420P10LE, AV_PIX_FMT_YUV422P10LE, AV_PIX_FMT_YUV444P10LE],
        [AV_PIX_FMT_YUV420P12LE, AV_PIX_FMT_YUV422P12LE, AV_PIX_FMT_YUV444P12LE],
        [AV_PIX_FMT_YUV420P16LE, AV_PIX_FMT_YUV422P16LE, AV_PIX_FMT_YUV444P16LE],
    ]

    /// `workingFormat` for what the decoder says its frames are, with the transfer, primaries and
    /// HDR side data of the stream (SourceColorShader in the renderer reads them).
    package var workingFormat: (AVPixelFormat, YUVColorSpace) {
        var (format, color) = VideoSource.workingFormat(for: decoder.pointee.pix_fmt, colorspace: decoder.pointee.colorspace,
                                                        range: decoder.pointee.color_range,
                                                        width: Int(decoder.pointee.width), height: Int(decoder.pointee.height))
        let (transfer, primaries) = VideoSource.colorDescription(trc: decoder.pointee.color_trc, primaries: decoder.pointee.color_primaries)
        color.transfer = transfer
        color.primaries = primaries
        // (HDR side data only for HDR: it may take a look at the first frame.)
        if transfer.isHDR { color.hdr = hdrMetadata }
        return (format, color)
    }

    /// The transfer and primaries the renderer tells apart: PQ, HLG or SDR; BT.2020 or BT.709
    /// (BT.601's and unspecified primaries are read as BT.709's, as swscale does).
    package static func colorDescription(trc: AVColorTransferCharacteristic, primaries: AVColorPrimaries) -> (ColorTransfer, ColorPrimaries) {
        let transfer: ColorTransfer = trc == AVCOL_TRC_SMPTE2084 ? .pq : trc == AVCOL_TRC_ARIB_STD_B67 ? .hlg : .sdr
        return (transfer, primaries == AVCOL_PRI_BT2020 ? .bt2020 : .bt709)
    }

    /// Dolby Vision with a cross-compatible base layer (profile 8.4: HLG; 8.1: HDR10), which is
    /// what gpuencode decodes: the profile and compatibility id, nil without a DOVI record.
    package var dolbyVision: (profile: Int, compatibility: Int)? {
        guard let raw = av_stream_get_side_data(videoStream, AV_PKT_DATA_DOVI_CONF, nil) else { return nil }
        let d = UnsafeRawPointer(raw).load(as: AVDOVIDecoderConfigurationRecord.self)
        return (Int(d.dv_profile), Int(d.dv_bl_signal_compatibility_id))
    }
}
