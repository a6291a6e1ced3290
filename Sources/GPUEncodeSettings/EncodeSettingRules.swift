import GPUEncodeCore

/// Where an encode setting may be given.
public struct EncodeSettingPlaces: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Flags of the transcode and of `batch` (the `EncodeOptions` group).
    public static let commandLine = EncodeSettingPlaces(rawValue: 1)
    /// A preset's `"encode"` block.
    public static let preset = EncodeSettingPlaces(rawValue: 2)
    /// A batch manifest's columns (CSV) or job members (JSON).
    public static let manifest = EncodeSettingPlaces(rawValue: 4)
    public static let everywhere: EncodeSettingPlaces = [.commandLine, .preset, .manifest]
}

/// One encode setting, declared once for every place that takes it: its key (a preset's
/// `"encode"` member and a manifest column), its command-line flags and help, the kind of value,
/// where it may appear, and its rule. The transcode's and batch's flags (`EncodeOptions`),
/// manifest columns, preset `"encode"` blocks, `presets show`, the JSON Schema and the batch's
/// settings digest are all made from `EncodeSetting.all`.
public struct EncodeSetting: Sendable {
    public enum Kind: Sendable {
        /// A number (JSON number).
        case number(ClosedRange<Double>)
        /// A whole number (JSON number).
        case integer(ClosedRange<Int>)
        /// One of these words (JSON string).
        case word([String])
        /// Free text (JSON string).
        case text
        /// A rate such as 4M or 2500k (JSON string, or a number of bits per second); also a frame
        /// rate (`fps`: 30, "30000/1001").
        case rate
        /// On or off: a flag on the command line, true/false elsewhere.
        case flag
        /// A comma-separated list of whole numbers ("1,3"; JSON: also an array of numbers).
        case list
        /// KEY=VALUE, repeatable (JSON manifests: an object; CSV: `metadata.KEY` columns).
        case entries
    }

    /// A preset's `"encode"` member and a manifest column (camelCase; manifests also take
    /// snake_case and kebab-case spellings).
    public let key: String
    /// Command-line spellings, the documented one first: `--crf`, `-g`, `-c:v`.
    public let flags: [String]
    /// Spellings that still work but are not in --help (`--x264-preset`).
    public let hiddenFlags: [String]
    /// Value-less flags standing for a value (`-an` is `--audio none`).
    public let switches: [(flag: String, value: String)]
    public let valueName: String
    /// The --help text; README and docs/presets.md say the same.
    public let help: String
    public let kind: Kind
    public let places: EncodeSettingPlaces
    /// Older keys read as this one in manifests (presets are upgraded by PresetMigration instead).
    public let legacyKeys: [String]
    /// Checks `text` (as given, or a JSON value as text) and stores it; returns what is wrong, or nil.
    let parse: @Sendable (_ text: String, _ place: EncodeSettingPlaces, _ into: inout EncodeOverrides) -> String?
    /// The value as JSON (`presets show`), nil when not set.
    let json: @Sendable (EncodeOverrides) -> JSONValue?

    init(key: String, flags: [String], hiddenFlags: [String] = [], switches: [(flag: String, value: String)] = [], valueName: String,
         help: String, kind: Kind, places: EncodeSettingPlaces, legacyKeys: [String] = [],
         parse: @escaping @Sendable (String, EncodeSettingPlaces, inout EncodeOverrides) -> String?,
         json: @escaping @Sendable (EncodeOverrides) -> JSONValue?) {
        self.key = key
        self.flags = flags
        self.hiddenFlags = hiddenFlags
        self.switches = switches
        self.valueName = valueName
        self.help = help
        self.kind = kind
        self.places = places
        self.legacyKeys = legacyKeys
        self.parse = parse
        self.json = json
    }

    /// The documented flag: `--crf`.
    public var flag: String { flags.first ?? "--" + key }

    /// Parses a value for this setting given at `place`; a problem is returned as text.
    public func apply(_ text: String, at place: EncodeSettingPlaces, to overrides: inout EncodeOverrides) -> String? {
        parse(text, place, &overrides)
    }

    /// The value `overrides` has for this setting, as a preset writes it.
    public func jsonValue(of overrides: EncodeOverrides) -> JSONValue? { json(overrides) }

    /// The JSON Schema of this setting's value.
    public var schema: JSONValue {
        var s: [(String, JSONValue)]
        switch kind {
        case .number(let r): s = [("type", .string("number")), ("minimum", .number(r.lowerBound)), ("maximum", .number(r.upperBound))]
        case .integer(let r): s = [("type", .string("integer")), ("minimum", .number(Double(r.lowerBound))), ("maximum", .number(Double(r.upperBound)))]
        case .word(let words): s = [("enum", .strings(words))]
        case .text: s = [("type", .string("string"))]
        case .rate: s = [("type", .strings(["string", "number"]))]
        case .flag: s = [("type", .string("boolean"))]
        case .list: s = [("type", .string("array")), ("items", .object([("type", .string("integer")), ("minimum", .number(1))]))]
        case .entries: s = [("type", .string("object")), ("additionalProperties", .object([("type", .string("string"))]))]
        }
        s.append(("description", .string(help)))
        return .object(s)
    }

    public static func named(_ key: String) -> EncodeSetting? { all.first { $0.key == key } }

    /// The settings a preset's `"encode"` takes, in order.
    public static var presetKeys: [String] { all.filter { $0.places.contains(.preset) }.map(\.key) }
    /// The manifest columns for encode settings, in order.
    public static var manifestKeys: [String] { all.filter { $0.places.contains(.manifest) }.map(\.key) }

    /// The setting a manifest column names: its key in any of camelCase, snake_case or
    /// kebab-case (`audio_bitrate`), or a legacy key (`x264Preset`, `x264_preset`).
    public static func forColumn(_ name: String) -> EncodeSetting? {
        let folded = fold(name)
        return all.first { s in s.places.contains(.manifest) && ([s.key] + s.legacyKeys).contains { fold($0) == folded } }
    }

    static func fold(_ name: String) -> String { String(name.lowercased().filter { $0 != "_" && $0 != "-" }) }
}

extension EncodeSetting {
    /// Every encode setting, in --help order.
    public static let all: [EncodeSetting] = [
        EncodeSetting(
            key: "codec", flags: ["--codec", "-c:v"], valueName: "h264|hevc|av1",
            help: "Video codec: h264 (libx264, the default), hevc (libx265) or av1 (libsvtav1, the default for .webm). -c:v also takes the encoder names libx264, libx265, libsvtav1, and h264_nvenc or hevc_nvenc for NVIDIA's encoder (as --encoder nvenc). The container must hold it: .webm is AV1 only, .mov has no AV1.",
            kind: .word(VideoCodec.allCases.map(\.rawValue)), places: .everywhere,
            parse: { text, place, o in
                guard let (codec, encoder) = VideoCodec.parse(text) else {
                    return "\"\(text)\" is not a codec: use h264, hevc or av1 (or libx264, libx265, libsvtav1, h264_nvenc, hevc_nvenc)"
                }
                if encoder != nil && place != .commandLine {
                    return "\"\(text)\" chooses NVIDIA's encoder, which is the machine's choice: give \(codec.rawValue) here and --encoder nvenc on the command line"
                }
                if let encoder, let given = o.encoder, given != encoder {
                    return "\(text) contradicts --encoder \(given.rawValue)"
                }
                o.codec = codec
                if let encoder { o.encoder = encoder }
                return nil
            },
            json: { $0.codec.map { .string($0.rawValue) } }),
        EncodeSetting(
            key: "encoder", flags: ["--encoder"], valueName: "software|nvenc|auto",
            help: "Which encoder: software (the default: libx264, libx265 or libsvtav1; reproducible), nvenc (h264_nvenc or hevc_nvenc: --crf becomes constant quality -cq, --speed maps to p1..p7; exit 69 where there is no NVENC engine, as on the H100, and for AV1, which FFmpeg 5.1's NVENC cannot encode) or auto (nvenc, else the software encoder with a warning). libx264 is an old name of software.",
            kind: .word(EncoderChoice.allCases.map(\.rawValue)), places: .commandLine,
            parse: { text, _, o in
                guard let choice = EncoderChoice(argument: text) else { return "\"\(text)\" is not one of software, nvenc, auto" }
                if let given = o.encoder, given != choice { return "--encoder \(text) contradicts -c:v/--codec, which chose \(given.rawValue)" }
                o.encoder = choice
                return nil
            },
            json: { $0.encoder.map { .string($0.rawValue) } }),
        EncodeSetting(
            key: "speed", flags: ["--speed"], hiddenFlags: ["--x264-preset"], valueName: "name",
            help: "Speed against compression, on x264's preset scale: \(EncoderSettings.speeds.joined(separator: ", ")) (default medium). Slower is smaller at the same quality. x264 and x265 take the name as their -preset; SVT-AV1 gets preset \(EncoderSettings.speeds.map { String(EncoderSettings.svtav1Presets[$0]!) }.joined(separator: ", ")) in that order; NVENC p1 (ultrafast, superfast), p2, p3 (faster, fast), p4 (medium), p5, p6, p7 (veryslow, placebo).",
            kind: .word(EncoderSettings.speeds), places: .everywhere, legacyKeys: ["x264Preset"],
            parse: { text, _, o in
                if let problem = oneOf(text, EncoderSettings.speeds) { return problem }
                o.speed = text
                return nil
            },
            json: { $0.speed.map { .string($0) } }),
        EncodeSetting(
            key: "crf", flags: ["--crf"], valueName: "n",
            help: "Constant rate factor, on the codec's own scale as in ffmpeg; lower is better and bigger. h264 0-51 (default 23; 0 is lossless), hevc 0-51 (default 28; not lossless at 0: --x265-params lossless=1 is), av1 1-63 whole numbers (default 35; SVT-AV1 has no lossless mode). Not used with --bitrate.",
            kind: .number(0...63), places: .everywhere,
            parse: { text, _, o in
                guard let v = decimal(text) else { return "\(text) is not a number" }
                guard (0.0...63.0).contains(v) else { return "\(formatNumber(v)) is out of range 0...51 (h264, hevc) or 1...63 (av1)" }
                o.crf = v
                return nil
            },
            json: { $0.crf.map { .number($0) } }),
        EncodeSetting(
            key: "bitrate", flags: ["--bitrate", "-b:v"], valueName: "rate",
            help: "Average video bitrate instead of --crf, as ffmpeg writes it: 4M, 2500k, 800000 (at least 1k).",
            kind: .rate, places: .everywhere,
            parse: { text, _, o in
                guard let bits = parseRate(text) else { return "\(text) is not a rate such as 4M, 2500k or 800000 (at least 1k)" }
                o.bitrate = bits
                return nil
            },
            json: { $0.bitrate.map { .number(Double($0)) } }),
        EncodeSetting(
            key: "keyint", flags: ["--keyint", "-g"], valueName: "frames",
            help: "Maximum keyframe interval in frames, \(EncoderSettings.keyintRange.lowerBound)-\(EncoderSettings.keyintRange.upperBound) (x264 and x265 default 250; SVT-AV1 picks its own).",
            kind: .integer(EncoderSettings.keyintRange), places: .everywhere,
            parse: { text, _, o in
                let r = EncoderSettings.keyintRange
                guard let v = decimal(text), let n = Int(wholeNumber: v), r.contains(n) else {
                    return "\(decimal(text).map(formatNumber) ?? text) is not a whole number of frames from \(r.lowerBound) to \(r.upperBound)"
                }
                o.keyint = n
                return nil
            },
            json: { $0.keyint.map { .number(Double($0)) } }),
        EncodeSetting(
            key: "tune", flags: ["--tune"], valueName: "name",
            help: "Encoder tune: x264 \(EncoderSettings.x264Tunes.joined(separator: ", ")); x265 \(EncoderSettings.x265Tunes.joined(separator: ", ")); SVT-AV1 none.",
            kind: .word(allTunes), places: .everywhere,
            parse: { text, _, o in
                if let problem = oneOf(text, allTunes) { return problem }
                o.tune = text
                return nil
            },
            json: { $0.tune.map { .string($0) } }),
        EncodeSetting(
            key: "profile", flags: ["--profile"], valueName: "name",
            help: "Profile: h264 \(EncoderSettings.h264Profiles.joined(separator: ", ")) (default high; lossless uses high444); hevc main; av1 main.",
            kind: .word(EncoderSettings.h264Profiles), places: .everywhere,
            parse: { text, _, o in
                if let problem = oneOf(text, EncoderSettings.h264Profiles) { return problem }
                o.profile = text
                return nil
            },
            json: { $0.profile.map { .string($0) } }),
        paramsSetting(.h264, "x264"),
        paramsSetting(.hevc, "x265"),
        paramsSetting(.av1, "svtav1"),
        EncodeSetting(
            key: "threads", flags: ["--threads"], valueName: "n",
            help: "Encoder threads (x265: its thread pool, SVT-AV1: logical processors); 0 lets the encoder choose. Batch: per job, default cores / jobs.",
            kind: .integer(EncoderSettings.threadsRange), places: .commandLine,
            parse: { text, _, o in
                let r = EncoderSettings.threadsRange
                guard let v = decimal(text), let n = Int(wholeNumber: v), r.contains(n) else {
                    return "\(decimal(text).map(formatNumber) ?? text) is out of range \(r.lowerBound)...\(r.upperBound)"
                }
                o.threads = n
                return nil
            },
            json: { $0.threads.map { .number(Double($0)) } }),
        .choice(HardwareAcceleration.self, key: "hwaccel", flags: ["--hwaccel"], valueName: "none|cuda|auto",
                help: "Video decoding: none (software, default), cuda (NVDEC through FFmpeg's cuda hwaccel, frames kept on the GPU for the filters; exit 69 where there is no NVIDIA driver or the codec has no NVDEC support) or auto (NVDEC where it works, else software). Env GPUENCODE_HWACCEL.",
                places: .commandLine, at: \.hwaccel),
        .choice(HDRMode.self, key: "hdr", flags: ["--hdr"], valueName: "tonemap|keep",
                help: "HDR input (HLG or PQ): tonemap (the default: SDR BT.709, 8-bit, through --tonemap) or keep (HDR out: 10-bit in the input's colour space with its transfer, primaries and matrix tags, mastering display and content light level; HEVC Main 10 unless --codec says av1 (10-bit) or h264 (High 10)); filters then act on the HDR signal's own R'G'B', PQ or HLG code values, not SDR: docs/hdr.md). SDR input ignores it.",
                places: .everywhere, at: \.hdr),
        .choice(ToneMapCurve.self, key: "tonemap", flags: ["--tonemap"], valueName: "curve",
                help: "Tone-mapping curve from HDR to SDR: bt2390 (the default, ITU-R BT.2390's EETF as libplacebo and mpv), hable, mobius, reinhard (as ffmpeg's tonemap filter with its default parameters) or clip. HLG is shown through the BT.2100 OOTF at its nominal peak (1000 nits unless the stream's metadata says otherwise), PQ through its EOTF; BT.2020 colours outside BT.709 are desaturated towards their luminance, hue kept.",
                places: .everywhere, at: \.tonemap),
        EncodeSetting(
            key: "targetPeak", flags: ["--target-peak"], valueName: "nits",
            help: "Peak of the SDR display tone mapping aims at, in cd/m² (nits), 10-10000: HDR light this bright becomes SDR white (default 203, BT.2408's HDR reference white, as libplacebo and mpv; 100 is ffmpeg's tonemap convention, brighter). Higher keeps more highlight detail and darkens the rest.",
            kind: .number(10...10000), places: .everywhere,
            parse: { text, _, o in
                guard let v = decimal(text), (10.0...10000.0).contains(v) else { return "\(text) is not a peak from 10 to 10000 nits" }
                o.targetPeak = v
                return nil
            },
            json: { $0.targetPeak.map { .number($0) } }),
        EncodeSetting(
            key: "peakDetect", flags: ["--peak-detect"], valueName: "",
            help: "Tone-map to each scene's measured peak (the brightest light of every frame, measured on the GPU and smoothed over about 100 frames, reset at scene changes; as libplacebo's peak_detect and mpv's hdr-compute-peak) instead of the metadata's or nominal peak: dim scenes keep their brightness.",
            kind: .flag, places: .everywhere,
            parse: { text, _, o in
                guard let b = boolean(text) else { return "\(text) is not true or false" }
                o.peakDetect = b
                return nil
            },
            json: { $0.peakDetect.map { .bool($0) } }),
        .choice(DolbyVisionMode.self, key: "dolbyVision", flags: ["--dolby-vision"], valueName: "apply|base",
                help: "Dolby Vision input (profile 8.4 as iPhones record, 8.1, 5): apply (the default: each frame's RPU reshapes the base layer and its colour transform gives the light that is tone-mapped, as libplacebo and mpv show it) or base (the backward-compatible base layer, HLG or HDR10, as a player without Dolby Vision shows it). --hdr keep keeps the base layer.",
                places: .everywhere, at: \.dolbyVision),
        EncodeSetting(
            key: "audio", flags: ["--audio"], switches: [("-an", "none")], valueName: "auto|copy|aac|opus|none",
            help: "Audio: auto (copy what the container can hold, re-encode the rest), copy (every stream bit for bit), aac or opus (re-encode), none (no audio; also -an).",
            kind: .word(AudioPolicy.allCases.map(\.rawValue)), places: .everywhere,
            parse: { text, _, o in
                guard let a = AudioPolicy(rawValue: text) else { return "\"\(text)\" is not one of \(AudioPolicy.allCases.map(\.rawValue).joined(separator: ", "))" }
                if let given = o.audio, given != a { return "\(text) contradicts \(given == .none ? "-an" : "--audio \(given.rawValue)")" }
                o.audio = a
                return nil
            },
            json: { $0.audio.map { .string($0.rawValue) } }),
        EncodeSetting(
            key: "audioTracks", flags: ["--audio-tracks"], valueName: "1,3",
            help: "Which audio streams, in this order: positions among the input's audio streams, from 1 (default: all).",
            kind: .list, places: [.commandLine, .manifest],
            parse: { text, _, o in
                let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
                var tracks: [Int] = []
                for p in parts {
                    guard !p.isEmpty, p.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(p), (1...4096).contains(n) else {
                        return "\"\(text)\" is not a list of audio stream positions such as 1,3 (whole numbers from 1)"
                    }
                    if tracks.contains(n) { return "\"\(text)\" names stream \(n) twice" }
                    tracks.append(n)
                }
                o.audioTracks = tracks
                return nil
            },
            json: { $0.audioTracks.map { .array($0.map { .number(Double($0)) }) } }),
        EncodeSetting(
            key: "audioBitrate", flags: ["--audio-bitrate", "-b:a"], valueName: "rate",
            help: "Bitrate of re-encoded audio, e.g. 128k, from 8k to 2M (all channels together; default: AAC 64k and Opus 48k a channel, so 128k and 96k for stereo). Copied streams ignore it.",
            kind: .rate, places: .everywhere,
            parse: { text, _, o in
                let r = EncoderSettings.audioBitrateRange
                guard let bits = parseRate(text), r.contains(bits) else { return "\(text) is not an audio rate from 8k to 2M, such as 128k" }
                o.audioBitrate = bits
                return nil
            },
            json: { $0.audioBitrate.map { .number(Double($0)) } }),
        EncodeSetting(
            key: "stripMetadata", flags: ["--strip-metadata"], valueName: "",
            help: "Copy no metadata (container and stream tags) from the input; --metadata still adds tags.",
            kind: .flag, places: .everywhere,
            parse: { text, _, o in
                guard let b = boolean(text) else { return "\(text) is not true or false" }
                o.stripMetadata = b
                return nil
            },
            json: { $0.stripMetadata.map { .bool($0) } }),
        EncodeSetting(
            key: "noLocation", flags: ["--no-location"], valueName: "",
            help: "Drop location tags (GPS coordinates: location, com.apple.quicktime.location.ISO6709, ...) from the copied metadata.",
            kind: .flag, places: .everywhere,
            parse: { text, _, o in
                guard let b = boolean(text) else { return "\(text) is not true or false" }
                o.dropLocation = b
                return nil
            },
            json: { $0.dropLocation.map { .bool($0) } }),
        EncodeSetting(
            key: "copyts", flags: ["--copyts"], valueName: "",
            help: "Keep the input's absolute timestamps (ffmpeg's -copyts; an MPEG-TS continues across its 33-bit wrap, and times before 0 move to 0 with every stream, so nothing is hidden). By default the output starts at 0, as ffmpeg's does: the earliest stream's first time is subtracted from every stream, and every offset between them is kept.",
            kind: .flag, places: .everywhere,
            parse: { text, _, o in
                guard let b = boolean(text) else { return "\(text) is not true or false" }
                o.copyts = b
                return nil
            },
            json: { $0.copyts.map { .bool($0) } }),
        // Trim
        EncodeSetting(
            key: "start", flags: ["--start", "--ss", "-ss"], valueName: "time",
            help: "Start the output at this time of the input, as ffmpeg's input -ss: 90, 1:30, 00:01:30.500, 1.5, 500ms. Frame-accurate: decoding starts at the keyframe before it and the first frame shown is the first at or after it; the output starts at 0 (with --copyts it keeps its input times). Copied audio starts with the packet that holds the start (in .mp4/.mov an edit list hides the part before it; Opus into .mkv/.webm is trimmed to the sample by its pre-skip; other codecs in .mkv/.webm start up to one packet early, in sync, with a warning), re-encoded audio at the exact sample; subtitles are cut too (a cue shown across the start is kept from 0 to its end).",
            kind: .text, places: [.commandLine, .manifest],
            parse: { text, _, o in
                guard let t = parseTime(text) else { return "\"\(text)\" is not a time such as 90, 1:30, 00:01:30.500 or 500ms" }
                guard t >= 0 else { return "\(text) is before the input's start; give 0 or more" }
                o.start = t
                return nil
            },
            json: { $0.start.map { .string(formatTime($0)) } }),
        EncodeSetting(
            key: "to", flags: ["--to", "-to"], valueName: "time",
            help: "End the output at this time of the input (counted from the input's start, as ffmpeg's input -to; so --ss 10 --to 15 is 5 seconds). Not with -t.",
            kind: .text, places: [.commandLine, .manifest],
            parse: { text, _, o in
                guard let t = parseTime(text) else { return "\"\(text)\" is not a time such as 90, 1:30, 00:01:30.500 or 500ms" }
                guard t > 0 else { return "\(text) is not after the input's start" }
                if o.duration != nil { return "-t and -to cannot both be given (ffmpeg would use -t); give one" }
                o.to = t
                return nil
            },
            json: { $0.to.map { .string(formatTime($0)) } }),
        EncodeSetting(
            key: "duration", flags: ["--duration", "-t"], valueName: "time",
            help: "Length of the output from --ss, as ffmpeg's input -t (a time as for --ss). The last video frame is the last that starts less than this after the first one, as ffmpeg's trim filter. Not with --to.",
            kind: .text, places: [.commandLine, .manifest],
            parse: { text, _, o in
                guard let t = parseTime(text) else { return "\"\(text)\" is not a time such as 90, 1:30, 00:01:30.500 or 500ms" }
                guard t > 0 else { return "\(text) is not a length; give more than 0" }
                if o.to != nil { return "-t and -to cannot both be given (ffmpeg would use -t); give one" }
                o.duration = t
                return nil
            },
            json: { $0.duration.map { .string(formatTime($0)) } }),
        EncodeSetting(
            key: "deinterlace", flags: ["--deinterlace"], valueName: "auto|off|frame|field",
            help: "Interlaced video: auto (the default: deinterlace on the GPU, bwdif-style, what the input flags as interlaced, one frame per frame; progressive video is untouched), frame or field (deinterlace every frame, flagged or not, as ffmpeg's bwdif=deint=all: frame keeps the frame rate, field makes one frame per field, twice the rate, as bwdif's send_field), off (encode it interlaced with its field order, tt or bb, kept). With --preset none, auto leaves interlaced video interlaced, as off.",
            kind: .word(DeinterlaceMode.allCases.map(\.rawValue)), places: .everywhere,
            parse: { text, _, o in
                guard let m = DeinterlaceMode(rawValue: text) else { return "\"\(text)\" is not one of \(DeinterlaceMode.allCases.map(\.rawValue).joined(separator: ", "))" }
                o.deinterlace = m
                return nil
            },
            json: { $0.deinterlace.map { .string($0.rawValue) } }),
        // Scale and frame rate
        sideSetting("width", flags: ["--width", "-w"], what: "width",
                    help: "Scale to this width in pixels (even), keeping the displayed aspect: the height follows, rounded to even. Sizes are of the picture as shown: upright (a phone clip's rotation applied) and with non-square pixels made square. With --height, the picture fits inside the box. Scaling is the last step, after the preset (its crops included), on the GPU with Lanczos-3 (widened when shrinking, as swscale's). -w is HandBrake's spelling.",
                    keyPath: \.width),
        sideSetting("height", flags: ["--height"], what: "height",
                    help: "Scale to this height in pixels (even), keeping the displayed aspect (as --width): --height 720 makes a 16:9 clip 1280x720, and a phone clip shot upright 406x720.",
                    keyPath: \.height),
        EncodeSetting(
            key: "size", flags: ["--size"], valueName: "WxH",
            help: "Fit inside WIDTHxHEIGHT (both even) keeping the displayed aspect, as --width W --height H: 1280x720 makes a 4:3 clip 960x720. Not with --width or --height. The largest output (of these and --width, --height) is 16384 a side and 8912896 pixels (4096x2176) for a movie, 67108864 (8192x8192) for a picture; past it, exit 64 before any frame.",
            kind: .text, places: .everywhere,
            parse: { text, _, o in
                guard let (w, h) = ScaleRequest.parseSize(text) else { return "\"\(text)\" is not WIDTHxHEIGHT in pixels, such as 1280x720" }
                if let problem = ScaleRequest.sideProblem(w, "width") ?? ScaleRequest.sideProblem(h, "height") { return problem }
                if o.width != nil || o.height != nil { return "size gives the width and the height: give size (--size) or width and height (--width, --height), not both" }
                o.size = [w, h]
                return nil
            },
            json: { $0.size.map { .string("\($0[0])x\($0[1])") } }),
        sideSetting("maxWidth", flags: ["--max-width"], what: "width",
                    help: "Make the picture at most this wide (even), keeping the displayed aspect; never makes it larger (HandBrake's --maxWidth). Applies after --width/--height/--size.",
                    keyPath: \.maxWidth),
        sideSetting("maxHeight", flags: ["--max-height"], what: "height",
                    help: "Make the picture at most this tall (even), keeping the displayed aspect; never makes it larger: --max-height 1080 leaves 720p alone and brings 4K down to 1080p.",
                    keyPath: \.maxHeight),
        EncodeSetting(
            key: "fps", flags: ["--fps", "-r"], valueName: "rate",
            help: "Constant output frame rate: 30, 29.97 (2997/100, as ffmpeg reads it), 30000/1001, or ntsc, pal, film, ntsc-film. Frames are duplicated or dropped exactly as ffmpeg's fps filter does (-vf fps=RATE: each output time takes the frame shown at it, rounded to the nearest tick, from the first frame's time; the last frame lasts to its end). Without it the input's timing is kept, variable rate included. Audio is untouched.",
            kind: .rate, places: .everywhere,
            parse: { text, _, o in
                guard let rate = FrameRate.parse(text) else {
                    return "\"\(text)\" is not a frame rate such as 30, 29.97, 30000/1001, ntsc, pal or film (above 0, at most \(formatNumber(FrameRate.maximum)))"
                }
                o.fps = rate
                return nil
            },
            json: { $0.fps.map { .string($0.description) } }),
        EncodeSetting(
            key: "metadata", flags: ["--metadata"], valueName: "KEY=VALUE",
            help: "Set a container tag, e.g. title=Holiday (repeatable; an empty VALUE removes the tag, as in ffmpeg).",
            kind: .entries, places: [.commandLine, .manifest],
            parse: { text, _, o in
                guard let eq = text.firstIndex(of: "=") else { return "\"\(text)\" is not KEY=VALUE" }
                let key = String(text[..<eq]), value = String(text[text.index(after: eq)...])
                if key.isEmpty { return "\"\(text)\" has an empty KEY" }
                if key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) {
                    return "the key \"\(key)\" must be printable, without spaces"
                }
                if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                    return "the value of \(key) has a control character (line breaks included); tags are one line of printable text"
                }
                o.metadata = (o.metadata ?? []) + [MetadataEntry(key: key, value: value)]
                return nil
            },
            json: { o in o.metadata.map { .object($0.map { ($0.key, .string($0.value)) }) } }),
    ]

    /// `--width` and its kin: an even number of pixels (scale).
    static func sideSetting(_ key: String, flags: [String], what: String, help: String,
                            keyPath: WritableKeyPath<EncodeOverrides, Int?>) -> EncodeSetting {
        EncodeSetting(
            key: key, flags: flags, valueName: "pixels", help: help, kind: .integer(2...ScaleRequest.maxSide), places: .everywhere,
            parse: { text, _, o in
                let (v, problem) = ScaleRequest.parseSide(decimal(text).flatMap { Int(wholeNumber: $0) }.map(String.init) ?? text, what)
                if let problem { return problem }
                if o.size != nil && (key == "width" || key == "height") {
                    return "size gives the width and the height: give size (--size) or width and height (--width, --height), not both"
                }
                o[keyPath: keyPath] = v
                return nil
            },
            json: { $0[keyPath: keyPath].map { .number(Double($0)) } })
    }

    static let allTunes: [String] = EncoderSettings.x264Tunes + EncoderSettings.x265Tunes.filter { !EncoderSettings.x264Tunes.contains($0) }

    static func paramsSetting(_ codec: VideoCodec, _ name: String) -> EncodeSetting {
        let keyPath: WritableKeyPath<EncodeOverrides, String?> = codec == .h264 ? \.x264Params : codec == .hevc ? \.x265Params : \.svtav1Params
        return EncodeSetting(
            key: codec.paramsKey, flags: ["--\(name)-params"], valueName: "k=v:k=v",
            help: "\(codec.softwareEncoder)'s own options, as ffmpeg's -\(name)-params (key=value pairs joined by ':'); only with --codec \(codec.rawValue). Unknown keys are the encoder's warnings (shown with -v).",
            kind: .text, places: .everywhere,
            parse: { text, _, o in
                let pairs = text.split(separator: ":", omittingEmptySubsequences: false)
                guard !text.isEmpty, pairs.allSatisfy({ p in p.firstIndex(of: "=").map { $0 != p.startIndex } ?? false }) else {
                    return "\"\(text)\" is not key=value pairs joined by ':' (e.g. keyint=60:bframes=2)"
                }
                if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "\"\(text)\" has a control character" }
                o[keyPath: keyPath] = text
                return nil
            },
            json: { $0[keyPath: keyPath].map { .string($0) } })
    }

    static func oneOf(_ word: String, _ words: [String]) -> String? {
        words.contains(word) ? nil : "\"\(word)\" is not one of \(words.joined(separator: ", "))"
    }

    /// A decimal number as written by people: digits, one point, a sign and an exponent; not hex,
    /// inf or nan (which Double() would take). Finite only.
    static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }),
              let v = Double(text), v.isFinite else { return nil }
        return v
    }

    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: return nil
        }
    }
}
