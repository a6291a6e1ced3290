import GPUEncodeCore

// The settings a run is given, layer by layer (a manifest row, the command line, a preset), and
// how they stack into the `EncoderSettings` it uses; the rules for each key are the table in
// EncodeSettingRules.swift.

/// Encode settings given for a run, each optional (nil is "not given"): a preset's `"encode"`,
/// the command line's flags, a manifest row. `resolve` stacks them (a given value wins over the
/// ones below it) into the `EncoderSettings` a run uses.
public struct EncodeOverrides: Sendable, Equatable {
    public var codec: VideoCodec?
    public var encoder: EncoderChoice?
    public var speed: String?
    public var crf: Double?
    public var bitrate: Int64?
    public var keyint: Int?
    public var tune: String?
    public var profile: String?
    public var x264Params: String?
    public var x265Params: String?
    public var svtav1Params: String?
    public var threads: Int?
    public var hwaccel: HardwareAcceleration?
    public var audio: AudioPolicy?
    public var audioTracks: [Int]?
    public var audioBitrate: Int64?
    public var stripMetadata: Bool?
    public var dropLocation: Bool?
    public var hdr: HDRMode?
    public var tonemap: ToneMapCurve?
    public var targetPeak: Double?
    public var peakDetect: Bool?
    public var dolbyVision: DolbyVisionMode?
    public var copyts: Bool?
    public var deinterlace: DeinterlaceMode?
    // Scale and frame rate.
    public var width: Int?
    public var height: Int?
    /// `--size WxH`: [width, height].
    public var size: [Int]?
    public var maxWidth: Int?
    public var maxHeight: Int?
    public var fps: FrameRate?
    // Trim (microseconds from the input's start; `to` and `duration` are one end given two ways)
    public var start: Int64?
    public var to: Int64?
    public var duration: Int64?
    /// Added to the entries of the layers below (for one key, the later entry wins).
    public var metadata: [MetadataEntry]?

    public init(codec: VideoCodec? = nil, speed: String? = nil, crf: Double? = nil, bitrate: Int64? = nil, keyint: Int? = nil,
                tune: String? = nil, profile: String? = nil) {
        self.codec = codec
        self.speed = speed
        self.crf = crf
        self.bitrate = bitrate
        self.keyint = keyint
        self.tune = tune
        self.profile = profile
    }

    public var isEmpty: Bool { self == EncodeOverrides() }

    /// `self` where given, else `base` (metadata entries: `base`'s, then `self`'s).
    public func over(_ base: EncodeOverrides) -> EncodeOverrides {
        var o = self
        o.codec = codec ?? base.codec
        o.encoder = encoder ?? base.encoder
        o.speed = speed ?? base.speed
        o.crf = crf ?? base.crf
        o.bitrate = bitrate ?? base.bitrate
        o.keyint = keyint ?? base.keyint
        o.tune = tune ?? base.tune
        o.profile = profile ?? base.profile
        o.x264Params = x264Params ?? base.x264Params
        o.x265Params = x265Params ?? base.x265Params
        o.svtav1Params = svtav1Params ?? base.svtav1Params
        o.threads = threads ?? base.threads
        o.hwaccel = hwaccel ?? base.hwaccel
        o.audio = audio ?? base.audio
        o.audioTracks = audioTracks ?? base.audioTracks
        o.audioBitrate = audioBitrate ?? base.audioBitrate
        o.stripMetadata = stripMetadata ?? base.stripMetadata
        o.dropLocation = dropLocation ?? base.dropLocation
        o.hdr = hdr ?? base.hdr
        o.tonemap = tonemap ?? base.tonemap
        o.targetPeak = targetPeak ?? base.targetPeak
        o.peakDetect = peakDetect ?? base.peakDetect
        o.dolbyVision = dolbyVision ?? base.dolbyVision
        o.copyts = copyts ?? base.copyts
        o.deinterlace = deinterlace ?? base.deinterlace
        // Scale and frame rate. Width, height and size are one request: the layer that
        // gives any of them gives them all.
        if width == nil && height == nil && size == nil { (o.width, o.height, o.size) = (base.width, base.height, base.size) }
        o.maxWidth = maxWidth ?? base.maxWidth
        o.maxHeight = maxHeight ?? base.maxHeight
        o.fps = fps ?? base.fps
        // Trim. The end is one setting given two ways: a layer that gives either wins whole.
        o.start = start ?? base.start
        if to == nil && duration == nil { (o.to, o.duration) = (base.to, base.duration) }
        if base.metadata != nil || metadata != nil { o.metadata = (base.metadata ?? []) + (metadata ?? []) }
        return o
    }

    /// `self` with `other`'s settings where it has them (a child preset over its parent).
    public func overridden(by other: EncodeOverrides) -> EncodeOverrides { other.over(self) }

    func params(for codec: VideoCodec) -> String? {
        switch codec {
        case .h264: return x264Params
        case .hevc: return x265Params
        case .av1: return svtav1Params
        }
    }
}

/// The settings of a preset's `"encode"` block: the same optional settings as the command line's.
public typealias PresetEncodeSettings = EncodeOverrides

/// Where a layer of settings came from, for errors: which flag, manifest row or preset to fix.
public enum EncodeSource: Sendable, Equatable {
    case commandLine
    /// A manifest row: `jobs.csv:4`.
    case manifest(String)
    /// A preset's origin (its file, or `builtin:NAME`).
    case preset(String)

    /// A problem with setting `key` given here, as the error a run stops with: 64 for the command
    /// line and manifests, 67 for presets.
    func error(_ key: String, _ problem: String) -> GPUEncodeError {
        switch self {
        case .commandLine: return GPUEncodeError(.usage, "\(EncodeSetting.named(key)?.flag ?? key): \(problem)")
        case .manifest(let origin): return GPUEncodeError(.usage, path: origin, "\(key): \(problem)")
        case .preset(let origin): return GPUEncodeError(.preset, path: origin, "encode.\(key): \(problem)")
        }
    }
}

public struct EncodeLayer: Sendable {
    public var overrides: EncodeOverrides
    public var source: EncodeSource

    public init(_ overrides: EncodeOverrides, from source: EncodeSource) {
        self.overrides = overrides
        self.source = source
    }
}

extension EncodeOverrides {
    /// The settings a run uses from `layers`, highest first (a manifest row, the command line, the
    /// preset): each setting from the first layer that gives it, else the default; metadata
    /// entries from every layer, lowest first. Then the checks that need the codec: crf on its
    /// scale, a tune and profile it takes, and no params for another codec on the command line or
    /// in a manifest (a preset may carry params for every codec: the codec's own are used). A
    /// problem is thrown as the error of the layer that gave the value (64, or 67 for a preset).
    /// `output` picks the codec when no layer names one, as ffmpeg lets the container choose: AV1
    /// for .webm (the one codec gpuencode writes there), else H.264.
    public static func resolve(_ layers: [EncodeLayer], output: String? = nil) throws -> EncoderSettings {
        func first<T>(_ get: (EncodeOverrides) -> T?) -> (T, EncodeSource)? {
            for l in layers { if let v = get(l.overrides) { return (v, l.source) } }
            return nil
        }
        var e = EncoderSettings()
        let codec = first { $0.codec }
        e.codec = codec?.0 ?? output.map(VideoCodec.default(forOutput:)) ?? e.codec
        e.codecGiven = codec != nil
        e.encoder = first { $0.encoder }?.0 ?? e.encoder
        e.speed = first { $0.speed }?.0 ?? e.speed
        let crf = first { $0.crf }
        e.crf = crf?.0
        e.bitrate = first { $0.bitrate }?.0
        e.keyint = first { $0.keyint }?.0
        let tune = first { $0.tune }
        e.tune = tune?.0
        let profile = first { $0.profile }
        e.profile = profile?.0
        e.threads = first { $0.threads }?.0 ?? e.threads
        e.audio = first { $0.audio }?.0 ?? e.audio
        e.audioTracks = first { $0.audioTracks }?.0
        e.audioBitrate = first { $0.audioBitrate }?.0
        e.stripMetadata = first { $0.stripMetadata }?.0 ?? e.stripMetadata
        e.dropLocation = first { $0.dropLocation }?.0 ?? e.dropLocation
        e.hdr = first { $0.hdr }?.0 ?? e.hdr
        e.toneMapping.curve = first { $0.tonemap }?.0 ?? e.toneMapping.curve
        e.toneMapping.targetPeak = first { $0.targetPeak }?.0 ?? e.toneMapping.targetPeak
        e.toneMapping.peakDetect = first { $0.peakDetect }?.0 ?? e.toneMapping.peakDetect
        e.dolbyVision = first { $0.dolbyVision }?.0 ?? e.dolbyVision
        e.copyts = first { $0.copyts }?.0 ?? e.copyts
        e.deinterlace = first { $0.deinterlace }?.0 ?? e.deinterlace
        // Scale and frame rate (width, height and size from the first layer giving any).
        if let box = layers.first(where: { $0.overrides.width != nil || $0.overrides.height != nil || $0.overrides.size != nil })?.overrides {
            e.scale.width = box.size?[0] ?? box.width
            e.scale.height = box.size?[1] ?? box.height
        }
        e.scale.maxWidth = first { $0.maxWidth }?.0
        e.scale.maxHeight = first { $0.maxHeight }?.0
        e.frameRate = first { $0.fps }?.0
        // Trim. The end comes from the first layer giving --to or -t (one end, two spellings).
        let start = first { $0.start }
        e.trim.start = start?.0 ?? 0
        if let end = layers.first(where: { $0.overrides.to != nil || $0.overrides.duration != nil }) {
            if let to = end.overrides.to {
                guard to > e.trim.start else {
                    throw end.source.error("to", "\(formatTime(to)) s is not after the start, \(formatTime(e.trim.start)) s (--to counts from the input's start, as ffmpeg's -to; -t gives a length)")
                }
                e.trim.end = .to(to)
            } else if let d = end.overrides.duration {
                e.trim.end = .duration(d)
            }
        }
        e.metadata = layers.reversed().flatMap { $0.overrides.metadata ?? [] }

        for other in VideoCodec.allCases where other != e.codec {
            for l in layers where l.overrides.params(for: other) != nil {
                if case .preset = l.source { continue }
                let note = codec == nil ? " (the default; add --codec \(other.rawValue))" : ""
                throw l.source.error(other.paramsKey, "only for \(other.rawValue) (\(other.softwareEncoder)), and this run encodes \(e.codec.rawValue)\(note)")
            }
        }
        e.videoParams = first { $0.params(for: e.codec) }?.0
        if let (key, problem) = EncoderSettings.codecProblem(crf: e.crf, tune: e.tune, profile: e.profile, codec: e.codec) {
            let source = (key == "crf" ? crf?.1 : key == "tune" ? tune?.1 : profile?.1) ?? .commandLine
            throw source.error(key, problem)
        }
        return e
    }
}

extension VideoCodec {
    /// The codec of an output whose settings name none: AV1 for .webm (WebM holds VP8, VP9 and AV1,
    /// and AV1 is the one gpuencode encodes), H.264 for every other container.
    public static func `default`(forOutput path: String) -> VideoCodec {
        pathExtension(path).lowercased() == "webm" ? .av1 : .h264
    }
}
