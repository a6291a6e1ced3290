import GPUEncodeCore
import GPUEncodeSettings

/// The codecs audio is re-encoded to: FFmpeg's native AAC encoder, or libopus.
public enum AudioCodec: String, Sendable {
    case aac, opus

    /// How messages and the AAC/Opus names in docs spell it.
    public var displayName: String { self == .aac ? "AAC" : "Opus" }

    /// The default bitrate for `channels` channels when --audio-bitrate is not given, as HandBrake
    /// sizes it per channel: AAC 64 kb/s a channel (128k stereo, 384k 5.1), Opus 48 kb/s a channel
    /// (96k stereo, 288k 5.1).
    public func defaultBitrate(channels: Int) -> Int64 {
        Int64(max(1, channels)) * (self == .aac ? 64_000 : 48_000)
    }
}

/// The output container as far as audio is concerned, from the output file's extension.
public enum AudioContainer: Equatable, Sendable {
    /// .mp4, .m4v (and .m4a): the players are phones, browsers, TVs, QuickTime.
    case mp4
    /// .mov: as mp4, and QuickTime plays PCM.
    case mov
    /// .mkv: holds anything; players built on FFmpeg/libav play anything.
    case matroska
    /// .webm: Opus and Vorbis only (the WebM specification).
    case webm
    /// Any other container FFmpeg writes (.avi, .flv, .3gp, ...): what its muxer takes.
    case other(String)

    public init(outputPath: String) {
        switch pathExtension(outputPath) {
        case "mp4", "m4v", "m4a": self = .mp4
        case "mov", "qt": self = .mov
        case "mkv", "mka": self = .matroska
        case "webm": self = .webm
        case let ext: self = .other(ext)
        }
    }

    package var name: String {
        switch self {
        case .mp4: return "mp4"
        case .mov: return "mov"
        case .matroska: return "mkv"
        case .webm: return "webm"
        case .other(let ext): return ext
        }
    }

    /// The codec audio that cannot stay is re-encoded to under `--audio auto`.
    package var reencodeCodec: AudioCodec {
        switch self {
        case .matroska, .webm: return .opus
        default: return .aac
        }
    }

    /// True when the container's players play `codec` (an FFmpeg codec name) in practice, not
    /// merely when the muxer would write it: FFmpeg writes Vorbis and Opus into .mp4 and exits 0,
    /// and most players then play the picture in silence. `muxerHolds` is what the muxer says.
    package func plays(_ codec: String, muxerHolds: Bool) -> Bool {
        switch self {
        case .mp4:
            return AudioContainer.mp4Codecs.contains(codec) && muxerHolds
        case .mov:
            return (AudioContainer.mp4Codecs.contains(codec) || codec.hasPrefix("pcm_")) && muxerHolds
        case .matroska:
            return muxerHolds
        case .webm:
            return ["opus", "vorbis"].contains(codec)
        case .other:
            return muxerHolds
        }
    }

    /// Whether a re-encode to `codec` may go into this container (--audio aac|opus).
    package func accepts(_ codec: AudioCodec, muxerHolds: Bool) -> Bool {
        plays(codec.rawValue, muxerHolds: muxerHolds)
    }

    package static let mp4Codecs: Set<String> = ["aac", "mp3", "ac3", "eac3", "alac"]
}

/// What happens to one audio stream.
public enum AudioAction: Equatable, Sendable {
    case copy
    case encode(AudioCodec)
}

/// The decision for one selected audio stream, in output order.
public struct AudioStreamDecision: Equatable, Sendable {
    /// The stream's index in the input file (ffprobe's index), for messages and packet routing.
    public var inputIndex: Int
    /// Its 1-based position among the input's audio streams (what --audio-tracks counts).
    public var position: Int
    public var codec: String
    public var action: AudioAction
    /// One line for the log when auto re-encodes (why), nil otherwise.
    public var warning: String?
}

/// One input audio stream as the plan sees it: its index in the file, its FFmpeg codec name and
/// whether the output muxer can write it at all (avformat_query_codec).
public struct AudioStreamFacts: Equatable, Sendable {
    public var inputIndex: Int
    public var codec: String
    public var muxerHolds: Bool
    /// Whether the muxer can write the codecs a re-encode would produce (AAC, Opus).
    public var muxerHoldsAAC: Bool
    public var muxerHoldsOpus: Bool

    public init(inputIndex: Int, codec: String, muxerHolds: Bool, muxerHoldsAAC: Bool = true, muxerHoldsOpus: Bool = true) {
        self.inputIndex = inputIndex
        self.codec = codec
        self.muxerHolds = muxerHolds
        self.muxerHoldsAAC = muxerHoldsAAC
        self.muxerHoldsOpus = muxerHoldsOpus
    }
}

/// Which audio streams go into the output and how: a pure function of the input's audio streams,
/// the output container and the settings, so the policy table is tested without media.
///
/// | policy | stream the container plays | stream it does not play |
/// |---|---|---|
/// | auto | copied | re-encoded (AAC for .mp4/.m4v/.mov/others, Opus for .mkv/.webm), one warning line |
/// | copy | copied | error 64 naming the stream |
/// | aac, opus | re-encoded | re-encoded; error 64 where the container does not play that codec |
/// | none | dropped | dropped |
///
/// "Plays": .mp4/.m4v: AAC, MP3, AC-3, E-AC-3, ALAC; .mov: those and PCM; .mkv: anything its
/// muxer writes; .webm: Opus, Vorbis.
public enum AudioPlan {
    public static func decide(streams: [AudioStreamFacts], container: AudioContainer, policy: AudioPolicy,
                              tracks: [Int]?, input: String, output: String) throws -> [AudioStreamDecision] {
        if policy == .none { return [] }
        let selected: [(position: Int, facts: AudioStreamFacts)]
        if let tracks {
            selected = try tracks.map { position in
                guard position >= 1, position <= streams.count else {
                    let count = streams.count == 1 ? "1 audio stream" : "\(streams.count) audio streams"
                    throw GPUEncodeError(.usage, path: input, "--audio-tracks \(position): the input has \(count)")
                }
                return (position, streams[position - 1])
            }
        } else {
            selected = streams.enumerated().map { ($0.offset + 1, $0.element) }
        }
        // Messages name the output's own extension (.m4v, not the family's .mp4).
        let ext = "." + (pathExtension(output).isEmpty ? container.name : pathExtension(output))
        return try selected.map { position, s in
            let plays = container.plays(s.codec, muxerHolds: s.muxerHolds)
            var decision = AudioStreamDecision(inputIndex: s.inputIndex, position: position, codec: s.codec, action: .copy, warning: nil)
            switch policy {
            case .none:
                break
            case .copy:
                guard plays else {
                    let hint = container.accepts(.aac, muxerHolds: s.muxerHoldsAAC) ? "use --audio aac, or .mkv" : "use --audio opus, or .mkv"
                    throw GPUEncodeError(.usage, path: output,
                                         "audio stream #\(s.inputIndex) (\(s.codec)) cannot be copied into \(ext): \(reason(s.codec, ext, container, muxerHolds: s.muxerHolds)); \(hint)")
                }
            case .auto:
                if !plays {
                    let target = container.reencodeCodec
                    guard container.accepts(target, muxerHolds: target == .aac ? s.muxerHoldsAAC : s.muxerHoldsOpus) else {
                        throw GPUEncodeError(.usage, path: output,
                                             "audio stream #\(s.inputIndex) (\(s.codec)) cannot be stored in \(ext), nor re-encoded to \(target.displayName) for it; use .mkv")
                    }
                    decision.action = .encode(target)
                    decision.warning = "audio stream #\(s.inputIndex) (\(s.codec)) is re-encoded to \(target.displayName): \(reason(s.codec, ext, container, muxerHolds: s.muxerHolds))"
                }
            case .aac, .opus:
                let target: AudioCodec = policy == .aac ? .aac : .opus
                guard container.accepts(target, muxerHolds: target == .aac ? s.muxerHoldsAAC : s.muxerHoldsOpus) else {
                    let other: AudioCodec = target == .aac ? .opus : .aac
                    let hint = container.accepts(other, muxerHolds: true) ? "use --audio \(other.rawValue), or .mkv" : "use .mkv"
                    let why = container == .webm ? "WebM holds only Opus and Vorbis" : "\(ext) players do not play \(target.displayName)"
                    throw GPUEncodeError(.usage, path: output, "--audio \(target.rawValue): \(why); \(hint)")
                }
                decision.action = .encode(target)
            }
            return decision
        }
    }

    private static func reason(_ codec: String, _ ext: String, _ container: AudioContainer, muxerHolds: Bool) -> String {
        if !muxerHolds { return "\(ext) cannot hold \(codec)" }
        if container == .webm { return "WebM holds only Opus and Vorbis" }
        return "\(ext) players do not play \(codec)"
    }
}
