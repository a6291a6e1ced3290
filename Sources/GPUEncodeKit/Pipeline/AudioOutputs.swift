import CFFmpeg

/// The output streams for the input's audio, in the plan's order (after the video stream, before
/// subtitles): a copy gets the input's parameters and a StreamCopyHandler, a re-encode an
/// AudioTranscoder in an AudioTranscodeHandler.
struct AudioOutputs {
    /// Input stream index → the handler of its output stream, for every audio stream written.
    var handlers: [Int: OutputStreamHandler] = [:]
    /// The time bases of the audio output streams (for the MP4 movie timescale).
    var timeBases: [AVRational] = []

    static func add(input: VideoSource, output: OutputFile, settings: EncoderSettings, metadata: MetadataPolicy, timeline: TrimPlan, run: RunState,
                    inputPath: String, outputPath: String, report: TranscodeReport? = nil, log: @escaping @Sendable (LogLevel, String) -> Void) throws -> AudioOutputs {
        let container = AudioContainer(outputPath: outputPath)
        let facts: [AudioStreamFacts] = (0..<input.streamCount).compactMap { i in
            let par = input.stream(i).pointee.codecpar!.pointee
            guard par.codec_type == AVMEDIA_TYPE_AUDIO else { return nil }
            return AudioStreamFacts(inputIndex: i, codec: String(cString: avcodec_get_name(par.codec_id)),
                                    muxerHolds: output.canHold(par.codec_id),
                                    muxerHoldsAAC: output.canHold(AV_CODEC_ID_AAC), muxerHoldsOpus: output.canHold(AV_CODEC_ID_OPUS))
        }
        let plan = try AudioPlan.decide(streams: facts, container: container, policy: settings.audio, tracks: settings.audioTracks,
                                        input: inputPath, output: outputPath)
        if settings.audioBitrate != nil && !plan.isEmpty && !plan.contains(where: { $0.action != .copy }) {
            log(.warning, "\(outputPath): --audio-bitrate is ignored: every audio stream is copied, not re-encoded")
        }
        if settings.audio == .none || (settings.audioTracks != nil && plan.count < facts.count) {
            let dropped = facts.filter { f in !plan.contains { $0.inputIndex == f.inputIndex } }
            for f in dropped {
                log(.info, "audio stream #\(f.inputIndex) (\(f.codec)) left out")
                report?.stream(.object([("input", .number(f.inputIndex)), ("index", .null), ("type", .string("audio")), ("action", .string("drop")),
                                        ("codec", .string(f.codec)),
                                        ("reason", .string(settings.audio == .none ? "--audio none" : "not in --audio-tracks"))]),
                               index: nil, input: f.inputIndex)
            }
        }
        let globalHeader = output.format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0
        var result = AudioOutputs()
        for decision in plan {
            let s = input.stream(decision.inputIndex)
            if let warning = decision.warning { log(.warning, "\(outputPath): \(warning)") }
            let os = try output.addStream()
            switch decision.action {
            case .copy:
                try check(avcodec_parameters_copy(os.pointee.codecpar, s.pointee.codecpar), .internal, path: outputPath, "copying stream parameters")
                os.pointee.codecpar.pointee.codec_tag = 0
                os.pointee.time_base = s.pointee.time_base
                log(.info, "audio stream #\(decision.inputIndex) (\(decision.codec)): copied")
                let window = timeline.window(decision.inputIndex)
                let shift = timeline.shift(decision.inputIndex)
                // Matroska has no edit list: a cut start is trimmed by Opus's pre-skip, or not at all.
                var opus: OpusTrimStart?
                if output.isMatroska, let window, window.cut != nil {
                    opus = OpusTrimStart.plan(path: inputPath, stream: decision.inputIndex, in: input.format, window: window,
                                              seekTarget: timeline.seekTarget, shift: shift, copyts: settings.copyts)
                    if let o = opus, !o.apply(to: os.pointee.codecpar) { opus = nil }
                    if let o = opus {
                        log(.info, "audio stream #\(decision.inputIndex) (opus): the copy starts \(o.preSkip) samples before the cut, hidden by its pre-skip")
                    }
                }
                result.handlers[decision.inputIndex] = StreamCopyHandler(from: s, inputPath: inputPath, to: os, output: output, shift: shift,
                                                                         window: window, opus: opus,
                                                                         matroskaCut: output.isMatroska ? (outputPath, decision.codec) : nil, log: log)
            case .encode(let codec):
                let transcoder: AudioTranscoder
                do {
                    transcoder = try AudioTranscoder(stream: s, codec: codec, bitrate: settings.audioBitrate, globalHeader: globalHeader,
                                                     path: outputPath, shift: timeline.shift(decision.inputIndex), log: log)
                } catch let error as GPUEncodeError where error.isAboutInput {
                    // The transcoder names the output; a stream it cannot decode is the input's fault.
                    throw GPUEncodeError(error.kind, path: inputPath, error.message)
                }
                transcoder.trim = timeline.window(decision.inputIndex)
                try transcoder.configure(os)
                log(.info, transcoder.description)
                result.handlers[decision.inputIndex] = AudioTranscodeHandler(transcoder, to: os, output: output, run: run)
            }
            os.pointee.disposition = s.pointee.disposition
            metadata.copyStream(from: s.pointee.metadata, to: &os.pointee.metadata)
            if case .encode = decision.action {
                // The input's encoder name would now be wrong.
                av_dict_set(&os.pointee.metadata, "encoder", nil, 0)
            }
            result.timeBases.append(os.pointee.time_base)
            if let report {
                let par = os.pointee.codecpar.pointee
                var m: [(String, JSONValue)] = [("input", .number(decision.inputIndex)), ("index", .number(Int(os.pointee.index))), ("type", .string("audio"))]
                switch decision.action {
                case .copy:
                    m += [("action", .string("copy")), ("codec", .string(decision.codec))]
                case .encode(let codec):
                    m += [("action", .string("encode")), ("codec", .string(codec.rawValue)), ("encoder", .string(codec == .aac ? "aac" : "libopus")),
                          ("from", .string(decision.codec)), ("bitrate", .number(Double(par.bit_rate)))]
                }
                m += [("sampleRate", .number(Int(par.sample_rate))), ("channels", .number(Int(par.ch_layout.nb_channels)))]
                if let warning = decision.warning { m.append(("reason", .string(warning))) }
                report.stream(.object(m), index: Int(os.pointee.index), input: decision.inputIndex)
            }
        }
        return result
    }

    /// The MP4 movie timescale (where edit lists count) that holds the video's and every audio
    /// stream's start exactly: the least common multiple of their time bases' denominators, when
    /// it stays within 1,000,000; else the video's. A 1/1000 video time base (from Matroska) with a
    /// 44.1 kHz audio start would otherwise round the audio's empty edit down by up to 1 ms.
    static func movieTimescale(video: Int32, audio: [AVRational]) -> Int32 {
        func gcd(_ a: Int64, _ b: Int64) -> Int64 { b == 0 ? a : gcd(b, a % b) }
        var scale = Int64(video)
        for tb in audio where tb.num == 1 && tb.den > 0 {
            let den = Int64(tb.den)
            let lcm = scale / gcd(scale, den) * den
            if lcm > 1_000_000 { return video }
            scale = lcm
        }
        return Int32(scale)
    }
}

private extension GPUEncodeError {
    var isAboutInput: Bool {
        switch kind {
        case .input, .inputDecode: return true
        default: return false
        }
    }
}

/// Warnings of the setup (an audio stream re-encoded, a tag the container will not write), held until
/// the run has encoded its first frame: a run that fails before that prints its one error line and
/// nothing else. After `release` warnings pass straight through; notes (`-v`) always do.
final class DeferredLog: @unchecked Sendable {
    private let state = Locked<(released: Bool, pending: [String])>((false, []))
    private let log: @Sendable (LogLevel, String) -> Void

    init(_ log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.log = log
    }

    var function: @Sendable (LogLevel, String) -> Void {
        { [self] level, message in
            let held = level == .warning && state.withLock { s -> Bool in
                if !s.released { s.pending.append(message) }
                return !s.released
            }
            if !held { log(level, message) }
        }
    }

    /// Prints what was held, once.
    func release() {
        let pending = state.withLock { s -> [String] in
            s.released = true
            defer { s.pending = [] }
            return s.pending
        }
        for message in pending { log(.warning, message) }
    }
}
