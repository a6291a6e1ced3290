import CFFmpeg
import GPUEncodeCore

/// The input file and its streams as `--json` describes them (docs/json.md): what the container
/// says, read without decoding. Names are FFmpeg's (ffprobe's), so a script can compare them.
package enum StreamDescription {
    /// The input: path, container, start, duration, size, bitrate and every stream.
    package static func input(_ source: VideoSource) -> JSONValue {
        let c = source.format.pointee
        var members: [(String, JSONValue)] = [("path", .string(source.path)),
                                              ("container", .string(String(cString: c.iformat.pointee.name)))]
        let duration = c.duration > 0 && c.duration != AV_NOPTS ? Double(c.duration) / Double(AV_TIME_BASE) : nil
        members.append(("duration", duration.map { .number($0) } ?? .null))
        members.append(("startTime", c.start_time != AV_NOPTS ? .number(Double(c.start_time) / Double(AV_TIME_BASE)) : .null))
        let size = FileStamp(source.path)?.size
        members.append(("size", size.map { .number(Double($0)) } ?? .null))
        members.append(("bitrate", c.bit_rate > 0 ? .number(Double(c.bit_rate)) : .null))
        let streams = (0..<source.streamCount).map { stream(source.stream($0), rotation: $0 == source.videoIndex ? source.rotation : nil) }
        members.append(("streams", .array(streams)))
        return .object(members)
    }

    /// One stream: index, type and codec, and by type its picture or sound; `language` and
    /// `title` tags where it has them.
    package static func stream(_ s: UnsafeMutablePointer<AVStream>, rotation: Rotation? = nil) -> JSONValue {
        let par = s.pointee.codecpar.pointee
        var m: [(String, JSONValue)] = [("index", .number(Int(s.pointee.index))), ("type", .string(mediaType(par.codec_type))),
                                        ("codec", .string(String(cString: avcodec_get_name(par.codec_id))))]
        if let profile = avcodec_profile_name(par.codec_id, par.profile) { m.append(("profile", .string(String(cString: profile)))) }
        switch par.codec_type {
        case AVMEDIA_TYPE_VIDEO:
            m += picture(width: par.width, height: par.height, format: AVPixelFormat(rawValue: par.format),
                         matrix: par.color_space, primaries: par.color_primaries, transfer: par.color_trc, range: par.color_range)
            let rate = s.pointee.avg_frame_rate.num > 0 && s.pointee.avg_frame_rate.den > 0 ? s.pointee.avg_frame_rate : s.pointee.r_frame_rate
            m.append(("frameRate", rate.num > 0 && rate.den > 0 ? .number(av_q2d(rate)) : .null))
            m.append(("frames", s.pointee.nb_frames > 0 ? .number(Double(s.pointee.nb_frames)) : .null))
            if let rotation { m.append(("rotation", .number(rotation.rawValue))) }
            let sar = s.pointee.sample_aspect_ratio.num > 0 ? s.pointee.sample_aspect_ratio : par.sample_aspect_ratio
            m.append(("sampleAspectRatio", sar.num > 0 && sar.den > 0 ? .string("\(sar.num):\(sar.den)") : .null))
            m.append(("fieldOrder", .string(fieldOrder(par.field_order))))
        case AVMEDIA_TYPE_AUDIO:
            m.append(("sampleRate", .number(Int(par.sample_rate))))
            m.append(("channels", .number(Int(par.ch_layout.nb_channels))))
            var layout = par.ch_layout
            var text = [CChar](repeating: 0, count: 64)
            m.append(("channelLayout", av_channel_layout_describe(&layout, &text, 64) > 0 ? .string(String(cString: text)) : .null))
        default:
            break
        }
        m.append(("bitrate", par.bit_rate > 0 ? .number(Double(par.bit_rate)) : .null))
        m.append(("duration", s.pointee.duration > 0 && s.pointee.duration != AV_NOPTS ? .number(seconds(s.pointee.duration, s.pointee.time_base)) : .null))
        m.append(("startTime", s.pointee.start_time != AV_NOPTS ? .number(seconds(s.pointee.start_time, s.pointee.time_base)) : .null))
        for tag in ["language", "title"] {
            if let e = av_dict_get(s.pointee.metadata, tag, nil, 0), let v = e.pointee.value { m.append((tag, .string(String(cString: v)))) }
        }
        return .object(m)
    }

    /// Width, height, pixel format and colour (matrix, primaries, transfer, range) as ffprobe names them.
    package static func picture(width: Int32, height: Int32, format: AVPixelFormat, matrix: AVColorSpace, primaries: AVColorPrimaries,
                                transfer: AVColorTransferCharacteristic, range: AVColorRange) -> [(String, JSONValue)] {
        func name(_ p: UnsafePointer<CChar>?) -> JSONValue { p.map { .string(String(cString: $0)) } ?? .null }
        let color: JSONValue = .object([("matrix", name(av_color_space_name(matrix))), ("primaries", name(av_color_primaries_name(primaries))),
                                        ("transfer", name(av_color_transfer_name(transfer))), ("range", name(av_color_range_name(range)))])
        return [("width", .number(Int(width))), ("height", .number(Int(height))),
                ("pixelFormat", format == AV_PIX_FMT_NONE ? .null : name(av_get_pix_fmt_name(format))), ("color", color)]
    }

    /// "video", "audio", "subtitle", "data", "attachment" (ffprobe's codec_type).
    package static func mediaType(_ type: AVMediaType) -> String {
        av_get_media_type_string(type).map { String(cString: $0) } ?? "unknown"
    }

    static func fieldOrder(_ order: AVFieldOrder) -> String {
        switch order {
        case AV_FIELD_PROGRESSIVE: return "progressive"
        case AV_FIELD_TT: return "tt"
        case AV_FIELD_BB: return "bb"
        case AV_FIELD_TB: return "tb"
        case AV_FIELD_BT: return "bt"
        default: return "unknown"
        }
    }
}
