import CFFmpeg
import GPUEncodeCore

/// PNG and JPEG through FFmpeg's own image codecs, so still pictures need no new dependency.
public enum ImageIO {
    public static let readableExtensions = ["png", "jpg", "jpeg"]

    public static func isImagePath(_ path: String) -> Bool { readableExtensions.contains(pathExtension(path)) }

    /// The largest picture decoded, each way: a few bytes of PNG can claim 2³¹ x 2³¹ pixels, and
    /// the RGBA copy of 16384² is already 1 GiB. GPU texture limits are 16384 (llvmpipe) to 32768.
    public static let maxDimension = 16384

    /// The size a PNG (IHDR) or baseline/progressive JPEG (SOFn) header states, read before
    /// decoding; nil when the header cannot be found (the decoder then says what is wrong).
    static func headerSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        func be(_ i: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(bytes[i + $1]) } }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            guard bytes.count >= 24 else { return nil }
            return (be(16, 4), be(20, 4))
        }
        var i = 2
        while i + 9 < bytes.count {
            guard bytes[i] == 0xFF else { return nil }
            let marker = bytes[i + 1]
            if marker == 0xFF { i += 1; continue }
            // SOF0...SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry height then width.
            if marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                return (be(i + 7, 2), be(i + 5, 2))
            }
            i += 2 + be(i + 2, 2)
        }
        return nil
    }

    /// Decodes PNG or JPEG bytes (told apart by their signature) to RGBA.
    public static func decode(_ bytes: [UInt8], name: String) throws -> RGBAImage {
        let id: AVCodecID
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { id = AV_CODEC_ID_PNG } else if bytes.starts(with: [0xFF, 0xD8]) {
            id = AV_CODEC_ID_MJPEG
        } else {
            throw GPUEncodeError(.input, path: name, "not a PNG or JPEG image")
        }
        if let (w, h) = headerSize(bytes), w > maxDimension || h > maxDimension || w < 1 || h < 1 {
            throw GPUEncodeError(.input, path: name, "the image claims \(w)x\(h) pixels; at most \(maxDimension)x\(maxDimension) are read")
        }
        guard let codec = avcodec_find_decoder(id), let ctx = avcodec_alloc_context3(codec) else {
            throw GPUEncodeError(.internal, path: name, "this FFmpeg has no \(id == AV_CODEC_ID_PNG ? "PNG" : "JPEG") decoder")
        }
        var c: UnsafeMutablePointer<AVCodecContext>? = ctx
        defer { avcodec_free_context(&c) }
        // Also for headers headerSize does not find (the decoder checks against this).
        ctx.pointee.max_pixels = Int64(maxDimension * maxDimension)
        try check(avcodec_open2(ctx, codec, nil), .input, path: name, "opening the image decoder")
        let input = Packet(), decoded = Frame()
        // The objects own what the pointers below point at: they must live to the end.
        defer { withExtendedLifetime((input, decoded)) {} }
        let packet = input.pointer, frame = decoded.pointer
        try check(av_new_packet(packet, Int32(bytes.count)), .internal, path: name, "packet allocation")
        bytes.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        try check(avcodec_send_packet(ctx, packet), .inputDecode, path: name, "decoding the image")
        avcodec_send_packet(ctx, nil)
        try check(avcodec_receive_frame(ctx, frame), .inputDecode, path: name, "decoding the image")
        return try toRGBA(frame, name: name)
    }

    public static func read(_ path: String) throws -> RGBAImage {
        let bytes: [UInt8]
        do { bytes = try readFileSafely(path, kind: .image) } catch let e as FileReadError {
            throw GPUEncodeError(.input, path: path, "cannot read: \(e.reason)")
        }
        return try decode(bytes, name: path)
    }

    /// Converts a decoded frame of any format to RGBA (JPEG's full-range Y'CbCr included).
    static func toRGBA(_ frame: UnsafeMutablePointer<AVFrame>, name: String) throws -> RGBAImage {
        let f = frame.pointee
        let w = Int(f.width), h = Int(f.height)
        guard let sws = sws_getContext(f.width, f.height, AVPixelFormat(rawValue: f.format), f.width, f.height, AV_PIX_FMT_RGBA,
                                       SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nil, nil, nil) else {
            throw GPUEncodeError(.inputDecode, path: name, "unsupported image pixel format")
        }
        defer { sws_freeContext(sws) }
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let srcData: [UnsafePointer<UInt8>?] = [f.data.0, f.data.1, f.data.2, f.data.3].map { $0.map { UnsafePointer($0) } }
        let srcStride = [f.linesize.0, f.linesize.1, f.linesize.2, f.linesize.3]
        pixels.withUnsafeMutableBufferPointer { buf in
            let dst: [UnsafeMutablePointer<UInt8>?] = [buf.baseAddress, nil, nil, nil]
            let stride: [Int32] = [Int32(w * 4), 0, 0, 0]
            _ = sws_scale(sws, srcData, srcStride, 0, f.height, dst, stride)
        }
        return RGBAImage(width: w, height: h, pixels: pixels)
    }

    /// Encodes PNG (RGBA, lossless) or JPEG (quality ~95) by the path's extension.
    public static func encode(_ image: RGBAImage, forPath path: String) throws -> [UInt8] {
        let jpeg = ["jpg", "jpeg"].contains(pathExtension(path))
        guard let codec = avcodec_find_encoder(jpeg ? AV_CODEC_ID_MJPEG : AV_CODEC_ID_PNG), let ctx = avcodec_alloc_context3(codec) else {
            throw GPUEncodeError(.internal, path: path, "this FFmpeg has no image encoder for it")
        }
        var c: UnsafeMutablePointer<AVCodecContext>? = ctx
        defer { avcodec_free_context(&c) }
        let format = jpeg ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_RGBA
        ctx.pointee.width = Int32(image.width)
        ctx.pointee.height = Int32(image.height)
        ctx.pointee.pix_fmt = format
        ctx.pointee.time_base = AVRational(num: 1, den: 25)
        if jpeg {
            // JFIF: full-range BT.601 Y'CbCr (the yuvj formats say the same but are deprecated).
            ctx.pointee.color_range = AVCOL_RANGE_JPEG
            ctx.pointee.flags |= AV_CODEC_FLAG_QSCALE
            ctx.pointee.global_quality = 2 * FF_QP2LAMBDA
        }
        try check(avcodec_open2(ctx, codec, nil), .outputCreate, path: path, "opening the image encoder")
        let picture = Frame(), encoded = Packet()
        defer { withExtendedLifetime((picture, encoded)) {} }
        let frame = picture.pointer, packet = encoded.pointer
        frame.pointee.width = Int32(image.width)
        frame.pointee.height = Int32(image.height)
        frame.pointee.format = format.rawValue
        if jpeg {
            frame.pointee.quality = 2 * FF_QP2LAMBDA
            frame.pointee.color_range = AVCOL_RANGE_JPEG
        }
        try check(av_frame_get_buffer(frame, 0), .internal, path: nil, "frame allocation")
        guard let sws = sws_getContext(Int32(image.width), Int32(image.height), AV_PIX_FMT_RGBA, Int32(image.width), Int32(image.height), format,
                                       SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nil, nil, nil) else {
            throw GPUEncodeError(.internal, "no RGBA conversion")
        }
        defer { sws_freeContext(sws) }
        if jpeg {
            let coefficients = sws_getCoefficients(SWS_CS_ITU601)
            sws_setColorspaceDetails(sws, coefficients, 1, coefficients, 1, 0, 1 << 16, 1 << 16)
        }
        image.pixels.withUnsafeBufferPointer { buf in
            let src: [UnsafePointer<UInt8>?] = [buf.baseAddress, nil, nil, nil]
            let srcStride: [Int32] = [Int32(image.width * 4), 0, 0, 0]
            let dst = [frame.pointee.data.0, frame.pointee.data.1, frame.pointee.data.2, frame.pointee.data.3]
            let dstStride = [frame.pointee.linesize.0, frame.pointee.linesize.1, frame.pointee.linesize.2, frame.pointee.linesize.3]
            _ = sws_scale(sws, src, srcStride, 0, Int32(image.height), dst, dstStride)
        }
        try check(avcodec_send_frame(ctx, frame), .encode, path: path, "encoding the image")
        avcodec_send_frame(ctx, nil)
        try check(avcodec_receive_packet(ctx, packet), .encode, path: path, "encoding the image")
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }

    /// Writes the image atomically (temp file + rename), as every output is; `stopIfInterrupted`:
    /// see writeFileAtomically.
    public static func write(_ image: RGBAImage, to path: String, overwrite: Bool, stopIfInterrupted: Bool = false) throws {
        let bytes = try encode(image, forPath: path)
        try writeFileAtomically(bytes, to: path, overwrite: overwrite, stopIfInterrupted: stopIfInterrupted)
    }
}
