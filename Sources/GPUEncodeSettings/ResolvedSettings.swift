import GPUEncodeCore

extension EncoderSettings {
    /// The settings a run uses, as one layer that gives each value it carries, defaults included
    /// (the codec's crf when neither crf nor bitrate was given): so `EncodeSetting.all`'s
    /// `jsonValue` can write them as `presets show` writes a preset's "encode". Metadata entries
    /// are left to the given layer (they are the same list).
    public var asOverrides: EncodeOverrides {
        var o = EncodeOverrides(codec: codec, speed: speed, crf: bitrate == nil ? (crf ?? codec.defaultCRF) : crf, bitrate: bitrate,
                                keyint: keyint, tune: tune, profile: profile)
        o.encoder = encoder
        switch codec {
        case .h264: o.x264Params = videoParams
        case .hevc: o.x265Params = videoParams
        case .av1: o.svtav1Params = videoParams
        }
        o.threads = threads
        o.audio = audio
        o.audioTracks = audioTracks
        o.audioBitrate = audioBitrate
        o.stripMetadata = stripMetadata
        o.dropLocation = dropLocation
        o.hdr = hdr
        o.tonemap = toneMapping.curve
        o.targetPeak = toneMapping.targetPeak
        o.peakDetect = toneMapping.peakDetect
        o.dolbyVision = dolbyVision
        o.copyts = copyts
        o.deinterlace = deinterlace
        return o
    }
}

extension EncodeSetting {
    /// Every setting of `all`, by key, with the value a run uses: `resolved`'s, else the one given
    /// (a setting `asOverrides` does not carry), else null (not given; the encoder's own default).
    /// `--json`'s "settings": made from the same table and `jsonValue` as `presets show`, so a
    /// setting added to the table appears here without more code.
    public static func resolvedJSON(_ resolved: EncoderSettings, given: EncodeOverrides) -> JSONValue {
        let layered = resolved.asOverrides.over(given)
        return .object(all.map { ($0.key, $0.jsonValue(of: layered) ?? .null) })
    }
}
