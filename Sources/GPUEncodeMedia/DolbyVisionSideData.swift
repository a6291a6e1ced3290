import CFFmpeg
import Glibc
import GPUEncodeCore

// Dolby Vision RPUs as libavcodec exports them (AV_FRAME_DATA_DOVI_METADATA, libavutil/dovi_meta.h:
// the HEVC decoder parses the RPU NAL units of a stream that has them), turned into Core's
// `DolbyVisionRPU`, which has no FFmpeg types. The fixed-point coefficients are divided by
// 2^coef_log2_denom and the pivots normalised by the base layer's code range, as libplacebo's
// `pl_map_dovi_metadata` does.

extension Frame {
    /// The frame's Dolby Vision RPU, nil when it has none.
    package var dolbyVisionRPU: DolbyVisionRPU? {
        guard let sd = av_frame_get_side_data(pointer, AV_FRAME_DATA_DOVI_METADATA), let data = sd.pointee.data else { return nil }
        return data.withMemoryRebound(to: AVDOVIMetadata.self, capacity: 1) { DolbyVisionRPU(metadata: $0) }
    }
}

extension DolbyVisionRPU {
    init(metadata m: UnsafePointer<AVDOVIMetadata>) {
        let header = av_dovi_get_header(m).pointee
        let mapping = av_dovi_get_mapping(m).pointee
        let color = av_dovi_get_color(m).pointee
        let scale = 1 / Double(UInt64(1) << UInt64(min(header.coef_log2_denom, 63)))
        let codeMax = Double((1 << Int(max(header.bl_bit_depth, 1))) - 1)
        func q(_ r: AVRational) -> Double { r.den == 0 ? 0 : Double(r.num) / Double(r.den) }
        func array<T, E>(_ tuple: T, _: E.Type) -> [E] { withUnsafeBytes(of: tuple) { Array($0.bindMemory(to: E.self)) } }
        let curves = array(mapping.curves, AVDOVIReshapingCurve.self).map { c -> Curve in
            let count = min(max(Int(c.num_pivots), 2), Int(AV_DOVI_MAX_PIECES) + 1)
            let pivots = array(c.pivots, UInt16.self).prefix(count).map { Double($0) / codeMax }
            let methods = array(c.mapping_idc, AVDOVIMappingMethod.self)
            let polyOrders = array(c.poly_order, UInt8.self), mmrOrders = array(c.mmr_order, UInt8.self)
            let poly = array(c.poly_coef, Int64.self), mmr = array(c.mmr_coef, Int64.self), constants = array(c.mmr_constant, Int64.self)
            let pieces = (0..<(count - 1)).map { i -> Piece in
                if methods[i] == AV_DOVI_MAPPING_MMR {
                    let orders = min(max(Int(mmrOrders[i]), 1), 3)
                    return .mmr(constant: Double(constants[i]) * scale,
                                coefficients: (0..<orders).map { k in (0..<7).map { Double(mmr[i * 21 + k * 7 + $0]) * scale } })
                }
                let order = min(Int(polyOrders[i]), 2)
                return .polynomial((0..<3).map { k in k <= order ? Double(poly[i * 3 + k]) * scale : 0 })
            }
            return Curve(pivots: pivots, pieces: pieces)
        }
        self.init(rpuProfile: Int(header.vdr_rpu_profile), baseBitDepth: Int(header.bl_bit_depth), curves: curves,
                  yccToRGB: array(color.ycc_to_rgb_matrix, AVRational.self).map(q),
                  yccOffset: array(color.ycc_to_rgb_offset, AVRational.self).map(q),
                  rgbToLMS: array(color.rgb_to_lms_matrix, AVRational.self).map(q),
                  sourceMinPQ: Double(color.source_min_pq) / 4095, sourceMaxPQ: Double(color.source_max_pq) / 4095,
                  needsResidual: header.disable_residual_flag == 0)
    }
}

extension VideoSource {
    /// The first frame's Dolby Vision RPU, decoded by a decoder of its own (one frame: the run's
    /// decoder is not disturbed); nil where the stream has none or it cannot be read, and for an
    /// input that is not a regular file (a pipe read twice would lose what the run reads).
    package var firstFrameDolbyVisionRPU: DolbyVisionRPU? {
        guard readsAhead, let probe = try? VideoSource(path: path, threads: 1, videoOnly: true), let frame = try? probe.nextFrame() else { return nil }
        return frame.dolbyVisionRPU
    }

    /// Whether the first frame can be read ahead (`firstFrameDolbyVisionRPU`): a regular file.
    package var readsAhead: Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
    }
}
