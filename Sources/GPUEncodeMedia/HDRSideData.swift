import CFFmpeg
import GPUEncodeCore

// HDR side data (SMPTE ST 2086 mastering display, CTA-861.3 content light level) in and out as
// Core's `HDRMetadata`: read from the stream (MP4 mdcv/clli boxes, Matroska Colour elements) or,
// where only the bitstream carries it (HEVC SEI, AV1 metadata OBUs), from the first decoded frame;
// written as the output stream's side data, which the MP4 and Matroska muxers turn into boxes and
// elements.

extension VideoSource {
    /// The stream's HDR side data, else the first frame's.
    package var hdrMetadata: HDRMetadata {
        let stream = VideoSource.hdrMetadata(stream: videoStream)
        if stream != HDRMetadata() { return stream }
        return VideoSource.firstFrameHDRMetadata(path: path) ?? stream
    }

    static func hdrMetadata(stream: UnsafeMutablePointer<AVStream>) -> HDRMetadata {
        var size = 0
        let mastering = av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size)
        let light = av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, &size)
        return hdrMetadata(mastering: mastering.map { UnsafeRawPointer($0).load(as: AVMasteringDisplayMetadata.self) },
                           light: light.map { UnsafeRawPointer($0).load(as: AVContentLightMetadata.self) })
    }

    /// The first frame's side data, decoded by a decoder of its own (one frame: the run's decoder
    /// is not disturbed); nil where it cannot be read.
    static func firstFrameHDRMetadata(path: String) -> HDRMetadata? {
        guard let probe = try? VideoSource(path: path, threads: 1, videoOnly: true), let frame = try? probe.nextFrame() else { return nil }
        let mastering = av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA)
        let light = av_frame_get_side_data(frame.pointer, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL)
        return hdrMetadata(mastering: mastering.map { UnsafeRawPointer($0.pointee.data!).load(as: AVMasteringDisplayMetadata.self) },
                           light: light.map { UnsafeRawPointer($0.pointee.data!).load(as: AVContentLightMetadata.self) })
    }

    private static func hdrMetadata(mastering: AVMasteringDisplayMetadata?, light: AVContentLightMetadata?) -> HDRMetadata {
        var hdr = HDRMetadata()
        func q(_ r: AVRational) -> Double { r.den == 0 ? 0 : Double(r.num) / Double(r.den) }
        if let m = mastering, m.has_luminance != 0 || m.has_primaries != 0 {
            let p = m.display_primaries
            hdr.mastering = MasteringDisplay(red: (q(p.0.0), q(p.0.1)), green: (q(p.1.0), q(p.1.1)), blue: (q(p.2.0), q(p.2.1)),
                                             white: (q(m.white_point.0), q(m.white_point.1)),
                                             minLuminance: m.has_luminance != 0 ? q(m.min_luminance) : 0,
                                             maxLuminance: m.has_luminance != 0 ? q(m.max_luminance) : 0)
        }
        if let c = light { hdr.contentLight = ContentLightLevel(maxCLL: Int(c.MaxCLL), maxFALL: Int(c.MaxFALL)) }
        return hdr
    }
}

/// `hdr` as the side data of an output stream.
package func addHDRSideData(_ hdr: HDRMetadata, to stream: UnsafeMutablePointer<AVStream>) {
    if let m = hdr.mastering, let raw = av_stream_new_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, MemoryLayout<AVMasteringDisplayMetadata>.size) {
        raw.withMemoryRebound(to: AVMasteringDisplayMetadata.self, capacity: 1) { d in
            // ST 2086's own units: chromaticities in 0.00002, luminance in 0.0001 cd/m².
            func c(_ v: Double) -> AVRational { AVRational(num: Int32((v * 50000).rounded()), den: 50000) }
            func l(_ v: Double) -> AVRational { AVRational(num: Int32(clamping: Int64((v * 10000).rounded())), den: 10000) }
            d.pointee.display_primaries = ((c(m.red.x), c(m.red.y)), (c(m.green.x), c(m.green.y)), (c(m.blue.x), c(m.blue.y)))
            d.pointee.white_point = (c(m.white.x), c(m.white.y))
            d.pointee.min_luminance = l(m.minLuminance)
            d.pointee.max_luminance = l(m.maxLuminance)
            d.pointee.has_primaries = 1
            d.pointee.has_luminance = 1
        }
    }
    if let c = hdr.contentLight, let raw = av_stream_new_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, MemoryLayout<AVContentLightMetadata>.size) {
        raw.withMemoryRebound(to: AVContentLightMetadata.self, capacity: 1) { d in
            d.pointee.MaxCLL = UInt32(clamping: c.maxCLL)
            d.pointee.MaxFALL = UInt32(clamping: c.maxFALL)
        }
    }
}
