import ArgumentParser
import GPUEncodeKit

/// The encode settings' flags, declared once for the transcode and `batch` from the library's
/// table (`EncodeSetting.all`: names, help, rules), so both commands take the same flags with the
/// same checks as manifest columns and preset "encode" blocks.
struct EncodeOptions: ParsableArguments {
    @Option(name: flagNames("codec"), help: flagHelp("codec"), completion: flagCompletion("codec"))
    var codec: String?

    @Option(name: flagNames("encoder"), help: flagHelp("encoder"), completion: flagCompletion("encoder"))
    var encoder: String?

    @Option(name: flagNames("speed"), help: flagHelp("speed"), completion: flagCompletion("speed"))
    var speed: String?

    /// `--x264-preset`, the old name of --speed (hidden).
    @Option(name: .customLong("x264-preset"), help: ArgumentHelp("Old name of --speed.", visibility: .hidden))
    var x264Preset: String?

    @Option(name: flagNames("crf"), help: flagHelp("crf"), completion: flagCompletion("crf"))
    var crf: String?

    @Option(name: flagNames("bitrate"), help: flagHelp("bitrate"), completion: flagCompletion("bitrate"))
    var bitrate: String?

    @Option(name: flagNames("keyint"), help: flagHelp("keyint"), completion: flagCompletion("keyint"))
    var keyint: String?

    @Option(name: flagNames("tune"), help: flagHelp("tune"), completion: flagCompletion("tune"))
    var tune: String?

    @Option(name: flagNames("profile"), help: flagHelp("profile"), completion: flagCompletion("profile"))
    var profile: String?

    @Option(name: flagNames("x264Params"), help: flagHelp("x264Params"), completion: flagCompletion("x264Params"))
    var x264Params: String?

    @Option(name: flagNames("x265Params"), help: flagHelp("x265Params"), completion: flagCompletion("x265Params"))
    var x265Params: String?

    @Option(name: flagNames("svtav1Params"), help: flagHelp("svtav1Params"), completion: flagCompletion("svtav1Params"))
    var svtav1Params: String?

    @Option(name: flagNames("threads"), help: flagHelp("threads"), completion: flagCompletion("threads"))
    var threads: String?

    @Option(name: flagNames("hwaccel"), help: flagHelp("hwaccel"), completion: flagCompletion("hwaccel"))
    var hwaccel: String?

    @Option(name: flagNames("hdr"), help: flagHelp("hdr"), completion: flagCompletion("hdr"))
    var hdr: String?

    @Option(name: flagNames("tonemap"), help: flagHelp("tonemap"), completion: flagCompletion("tonemap"))
    var tonemap: String?

    @Option(name: flagNames("targetPeak"), help: flagHelp("targetPeak"), completion: flagCompletion("targetPeak"))
    var targetPeak: String?

    @Flag(name: flagNames("peakDetect"), help: flagHelp("peakDetect"))
    var peakDetect = false

    @Option(name: flagNames("dolbyVision"), help: flagHelp("dolbyVision"), completion: flagCompletion("dolbyVision"))
    var dolbyVision: String?

    @Option(name: flagNames("audio"), help: flagHelp("audio"), completion: flagCompletion("audio"))
    var audio: String?

    @Flag(name: .customLong("an", withSingleDash: true), help: "No audio (as --audio none).")
    var noAudio = false

    @Option(name: flagNames("audioTracks"), help: flagHelp("audioTracks"), completion: flagCompletion("audioTracks"))
    var audioTracks: String?

    @Option(name: flagNames("audioBitrate"), help: flagHelp("audioBitrate"), completion: flagCompletion("audioBitrate"))
    var audioBitrate: String?

    @Flag(name: flagNames("stripMetadata"), help: flagHelp("stripMetadata"))
    var stripMetadata = false

    @Flag(name: flagNames("noLocation"), help: flagHelp("noLocation"))
    var noLocation = false

    @Flag(name: flagNames("copyts"), help: flagHelp("copyts"))
    var copyts = false
    // Trim
    @Option(name: flagNames("start"), help: flagHelp("start"))
    var start: String?

    @Option(name: flagNames("to"), help: flagHelp("to"))
    var to: String?

    @Option(name: flagNames("duration"), help: flagHelp("duration"))
    var duration: String?

    @Option(name: flagNames("deinterlace"), help: flagHelp("deinterlace"), completion: flagCompletion("deinterlace"))
    var deinterlace: String?

    // Scale and frame rate
    @Option(name: flagNames("width"), help: flagHelp("width"))
    var width: String?
    @Option(name: flagNames("height"), help: flagHelp("height"))
    var height: String?
    @Option(name: flagNames("size"), help: flagHelp("size"))
    var size: String?
    @Option(name: flagNames("maxWidth"), help: flagHelp("maxWidth"))
    var maxWidth: String?
    @Option(name: flagNames("maxHeight"), help: flagHelp("maxHeight"))
    var maxHeight: String?
    @Option(name: flagNames("fps"), help: flagHelp("fps"), completion: .list(["24", "25", "30", "50", "60", "ntsc", "pal", "film"]))
    var fps: String?

    @Option(name: flagNames("metadata"), help: flagHelp("metadata"), completion: flagCompletion("metadata"))
    var metadata: [String] = []

    /// Each given value with the setting it is for and the flag it was given as.
    private var given: [(key: String, flag: String, value: String)] {
        var list: [(String, String, String)] = []
        func add(_ key: String, _ value: String?, flag: String? = nil) {
            if let value { list.append((key, flag ?? EncodeSetting.named(key)!.flag, value)) }
        }
        add("codec", codec)
        add("encoder", encoder)
        add("speed", speed)
        add("speed", x264Preset, flag: "--x264-preset")
        add("crf", crf)
        add("bitrate", bitrate)
        add("keyint", keyint)
        add("tune", tune)
        add("profile", profile)
        add("x264Params", x264Params)
        add("x265Params", x265Params)
        add("svtav1Params", svtav1Params)
        add("threads", threads)
        add("hwaccel", hwaccel)
        add("hdr", hdr)
        add("tonemap", tonemap)
        add("targetPeak", targetPeak)
        add("peakDetect", peakDetect ? "true" : nil)
        add("dolbyVision", dolbyVision)
        add("audio", audio)
        add("audio", noAudio ? "none" : nil, flag: "-an")
        add("audioTracks", audioTracks)
        add("audioBitrate", audioBitrate)
        add("stripMetadata", stripMetadata ? "true" : nil)
        add("noLocation", noLocation ? "true" : nil)
        add("copyts", copyts ? "true" : nil)
        add("deinterlace", deinterlace)
        // Scale and frame rate
        add("width", width)
        add("height", height)
        add("size", size)
        add("maxWidth", maxWidth)
        add("maxHeight", maxHeight)
        add("fps", fps)
        // Trim
        add("start", start)
        add("to", to)
        add("duration", duration)
        for entry in metadata { add("metadata", entry) }
        return list
    }

    /// The settings given, each checked by its setting's rule; a usage error (64) names the flag.
    /// `threadsMayBeAuto`: --threads 0 (the encoder chooses) is allowed; batch wants at least 1.
    func overrides(threadsMayBeAuto: Bool) throws -> EncodeOverrides {
        if speed != nil && x264Preset != nil { throw ValidationError("--speed and --x264-preset are the same setting; give one") }
        var o = EncodeOverrides()
        for (key, flag, value) in given {
            let setting = EncodeSetting.named(key)!
            if let problem = setting.apply(value, at: .commandLine, to: &o) { throw ValidationError("\(flag): \(problem)") }
        }
        if o.audio == AudioPolicy.none, o.audioTracks != nil {
            throw ValidationError("--audio-tracks selects audio streams, but \(noAudio ? "-an" : "--audio none") drops all audio; give one of them")
        }
        if !threadsMayBeAuto, o.threads == 0 { throw ValidationError("--threads: 0 is out of range 1...\(EncoderSettings.threadsRange.upperBound)") }
        return o
    }
}

/// A setting's command-line spellings as argument-parser names: `--crf`, `-g` (short),
/// `-c:v` (a long name with one dash, as ffmpeg writes it).
private func flagNames(_ key: String) -> NameSpecification {
    let setting = EncodeSetting.named(key)!
    return NameSpecification(setting.flags.map { flag -> NameSpecification.Element in
        if flag.hasPrefix("--") { return .customLong(String(flag.dropFirst(2))) }
        let name = String(flag.dropFirst())
        return name.count == 1 ? .customShort(name.first!) : .customLong(name, withSingleDash: true)
    })
}

/// What the shells offer after the flag: the words a setting takes (--codec h264 hevc av1...).
private func flagCompletion(_ key: String) -> CompletionKind {
    if case .word(let words) = EncodeSetting.named(key)!.kind { return .list(words) }
    return .default
}

private func flagHelp(_ key: String) -> ArgumentHelp {
    let setting = EncodeSetting.named(key)!
    return setting.valueName.isEmpty ? ArgumentHelp(setting.help) : ArgumentHelp(setting.help, valueName: setting.valueName)
}
