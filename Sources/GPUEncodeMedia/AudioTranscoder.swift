import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings
import CShim

/// Re-encodes one input audio stream: decode → libswresample (sample format, rate, channel layout)
/// → an AVAudioFifo cut into the encoder's frame size → FFmpeg's native `aac` or `libopus` → packets.
///
/// Timing: the first decoded frame's timestamp (after the decoder has dropped what the demuxer
/// marked to skip: an edit list's priming, Opus pre-skip) is the time of the first output sample;
/// every later frame is stamped from the number of samples sent so far, never from the input's
/// packets, so rounded container timestamps (Matroska's milliseconds) cannot make the audio drift.
/// The encoder's priming (AAC 1024 samples, Opus 312) comes out as packets before that time
/// (negative for a stream starting at 0); the MP4 muxer writes them as the edit list's media
/// time (for AAC starting after 0, with AudioTranscodeHandler's shift and EditListPatch), Matroska
/// as CodecDelay. Only real discontinuities in the input are followed: a jump of
/// more than `jumpLimit` seconds between the input's timestamps and the samples counted is filled
/// with silence (a gap) or dropped (an overlap), and a packet that does not decode becomes its
/// duration of silence, so the audio after it stays where it was.
package final class AudioTranscoder {
    package let description: String
    /// The time base of the packets handed to `emit`: 1/sample rate of the encoder, so each sample
    /// has its own tick. The caller rescales them to the output stream's time base and sets the
    /// stream index.
    package let timeBase: AVRational
    package let codec: AudioCodec
    /// The encoder's priming (initial padding) in samples: its first packet comes this much before
    /// the first sample's time.
    package var primingSamples: Int64 { Int64(encoder.pointee.initial_padding) }

    /// Timestamp jumps larger than this (seconds) are gaps or overlaps in the input, not rounding.
    package static let jumpLimit = 0.1

    private let inputIndex: Int
    private let path: String
    private let log: @Sendable (LogLevel, String) -> Void
    private let inputTimeBase: AVRational
    /// Subtracted from the input's timestamps (its time base) before anything else: the output
    /// starts at 0 unless --copyts (Timeline).
    private let timelineShift: Int64
    private let decoder: UnsafeMutablePointer<AVCodecContext>
    private let encoder: UnsafeMutablePointer<AVCodecContext>
    private let fifo: OpaquePointer
    private let frameSize: Int32
    /// Added to every packet's timestamps: FFmpeg 5.1's Matroska muxer writes Opus's CodecDelay but
    /// does not move the blocks by it (later versions do), so the first sample would play 6.5 ms
    /// early, and a stream starting at 0 would push every stream 7 ms later.
    private let muxerOffset: Int64

    private var resampler: OpaquePointer?
    private var closed = false
    /// The format, layout and rate `resampler` was made for (they may change mid-stream).
    private var resamplerInput: (format: Int32, layout: AVChannelLayout, rate: Int32)?
    private let decoded = Frame()
    private let encoded = Packet()
    /// Converted samples before they go into the fifo; grown as needed.
    private var converted: Frame?

    /// The first sample's time in `timeBase`; nil until the first frame is decoded.
    private var firstPts: Int64?
    /// Samples handed to the encoder: with firstPts, every frame's timestamp.
    private var sentSamples: Int64 = 0
    /// The input timeline covered so far (seconds): decoded samples plus silence added.
    private var inputSecondsBase = 0.0
    private var inputSamplesAtRate: Int64 = 0
    private var inputRate: Int32 = 0
    private var decodeErrors = 0
    private var warnedJump = false
    private var finished = false
    /// `--start`/`--to`/`-t` (TrimPlan): decoded samples before the cut and from the end on are
    /// dropped, to the sample (as ffmpeg's atrim). Set before the first packet.
    package var trim: TrimWindow?
    /// Past the trim's end: nothing more comes out but the encoder's tail.
    package private(set) var pastEnd = false

    /// `stream`: the input stream (its codec parameters and time base); `bitrate`: nil for the codec's
    /// default for the channel count; `globalHeader`: the output format's AVFMT_GLOBALHEADER; `path`:
    /// the output file, named in errors and warnings (the caller renames .input/.inputDecode errors to
    /// the input) and read for its container (Opus in Matroska gets the CodecDelay offset); `shift`:
    /// subtracted from the input's timestamps, in the input stream's time base (Timeline); `log`:
    /// warnings (downmix, bitrate clamped, gaps, undecodable packets).
    package init(stream: UnsafeMutablePointer<AVStream>, codec: AudioCodec, bitrate: Int64?, globalHeader: Bool, path: String,
         shift: Int64 = 0, log: @escaping @Sendable (LogLevel, String) -> Void) throws {
        let par = stream.pointee.codecpar!
        inputIndex = Int(stream.pointee.index)
        inputTimeBase = stream.pointee.time_base
        timelineShift = shift
        self.codec = codec
        self.path = path
        self.log = log
        let inName = String(cString: avcodec_get_name(par.pointee.codec_id))
        let label = "audio stream #\(inputIndex) (\(inName))"

        // Decoder.
        guard let decoderCodec = avcodec_find_decoder(par.pointee.codec_id) else {
            throw GPUEncodeError(.usage, path: path, "\(label) cannot be decoded by this FFmpeg, so it cannot be re-encoded; leave it out with --audio-tracks, or copy it into .mkv")
        }
        guard let dec = avcodec_alloc_context3(decoderCodec) else { throw GPUEncodeError(.internal, path: path, "out of memory") }
        var decoderOwned: UnsafeMutablePointer<AVCodecContext>? = dec
        var encoderOwned: UnsafeMutablePointer<AVCodecContext>?
        defer {
            // Only reached with something still owned when init throws.
            avcodec_free_context(&decoderOwned)
            avcodec_free_context(&encoderOwned)
        }
        try check(avcodec_parameters_to_context(dec, par), .input, path: path, "\(label): bad codec parameters")
        dec.pointee.pkt_timebase = stream.pointee.time_base
        try check(avcodec_open2(dec, decoderCodec, nil), .inputDecode, path: path, "\(label): cannot open the \(String(cString: decoderCodec.pointee.name)) decoder")
        let inChannels = Int(dec.pointee.ch_layout.nb_channels)
        let inRate = dec.pointee.sample_rate
        guard inChannels > 0, inRate > 0 else {
            throw GPUEncodeError(.inputDecode, path: path, "\(label): the input does not say its channel count and sample rate")
        }

        // Encoder: the native AAC encoder, or libopus at 48 kHz.
        let encoderName = codec == .aac ? "aac" : "libopus"
        guard let encoderCodec = avcodec_find_encoder_by_name(encoderName) else {
            throw GPUEncodeError(.encode, path: path, "this FFmpeg has no \(encoderName) encoder\(codec == .opus ? "; use --audio aac" : "")")
        }
        guard let enc = avcodec_alloc_context3(encoderCodec) else { throw GPUEncodeError(.internal, path: path, "out of memory") }
        encoderOwned = enc
        let outRate = codec == .opus ? 48000 : AudioTranscoder.closestRate(inRate, supported: AudioTranscoder.list(encoderCodec.pointee.supported_samplerates, end: 0))
        enc.pointee.sample_rate = outRate
        enc.pointee.time_base = AVRational(num: 1, den: outRate)
        let (layoutName, outChannels) = AudioTranscoder.layout(for: inChannels, codec: codec)
        try check(av_channel_layout_from_string(&enc.pointee.ch_layout, layoutName), .internal, path: path, "channel layout \(layoutName)")
        if outChannels < inChannels {
            log(.warning, "\(path): \(label) has \(inChannels) channels; \(codec.displayName) takes at most \(outChannels) here, so it is downmixed to \(layoutName)")
        }
        let formats = AudioTranscoder.list(encoderCodec.pointee.sample_fmts, end: AV_SAMPLE_FMT_NONE)
        enc.pointee.sample_fmt = formats.contains(dec.pointee.sample_fmt) ? dec.pointee.sample_fmt
            : formats.first { $0 == AV_SAMPLE_FMT_FLTP || $0 == AV_SAMPLE_FMT_FLT } ?? formats.first ?? AV_SAMPLE_FMT_FLTP
        var rate = bitrate ?? codec.defaultBitrate(channels: Int(outChannels))
        // libopus refuses rates outside 500..256000 b/s a channel; the AAC encoder cannot spend
        // more than 6144 bits per channel per 1024-sample frame.
        let perChannel: ClosedRange<Int64> = codec == .opus ? 6_000...256_000 : 8_000...(6144 * Int64(outRate) / 1024)
        let allowed = perChannel.lowerBound * Int64(outChannels)...perChannel.upperBound * Int64(outChannels)
        if !allowed.contains(rate) {
            let clamped = min(max(rate, allowed.lowerBound), allowed.upperBound)
            log(.warning, "\(path): --audio-bitrate \(rate) is outside what \(codec.displayName) takes for \(outChannels) channel(s) (\(allowed.lowerBound / 1000)k to \(allowed.upperBound / 1000)k); using \(clamped / 1000)k")
            rate = clamped
        }
        enc.pointee.bit_rate = rate
        if globalHeader { enc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        let opened = avcodec_open2(enc, encoderCodec, nil)
        if opened < 0 {
            throw GPUEncodeError(.encode, path: path, "\(label): cannot open the \(encoderName) encoder (\(outRate) Hz, \(layoutName), \(rate) b/s): \(averrorString(opened))")
        }
        frameSize = enc.pointee.frame_size > 0 ? enc.pointee.frame_size : 1024
        guard let queue = av_audio_fifo_alloc(enc.pointee.sample_fmt, enc.pointee.ch_layout.nb_channels, frameSize * 2) else {
            throw GPUEncodeError(.internal, path: path, "out of memory")
        }
        fifo = queue
        timeBase = enc.pointee.time_base

        let oformat = av_guess_format(nil, path, nil).map { String(cString: $0.pointee.name) } ?? ""
        let matroska = oformat.contains("matroska") || oformat.contains("webm")
        muxerOffset = codec == .opus && matroska && avformat_version() < (60 << 16) ? Int64(enc.pointee.initial_padding) : 0

        var inLayoutName = [CChar](repeating: 0, count: 64)
        av_channel_layout_describe(&dec.pointee.ch_layout, &inLayoutName, inLayoutName.count)
        description = "\(label): \(inRate) Hz \(String(cString: inLayoutName)) → \(codec.displayName) \(outRate) Hz \(layoutName), \(rate / 1000) kb/s"
        decoder = dec
        encoder = enc
        decoderOwned = nil
        encoderOwned = nil
    }

    deinit {
        close()
    }

    /// Frees the codecs now (as `VideoEncoder.close`: before the output is renamed into place).
    /// Nothing may use the transcoder afterwards; closing again does nothing.
    package func close() {
        guard !closed else { return }
        closed = true
        var d: UnsafeMutablePointer<AVCodecContext>? = decoder
        avcodec_free_context(&d)
        var e: UnsafeMutablePointer<AVCodecContext>? = encoder
        avcodec_free_context(&e)
        swr_free(&resampler)
        av_audio_fifo_free(fifo)
        if var input = resamplerInput?.layout { av_channel_layout_uninit(&input) }
    }

    /// The encoder's parameters (codec, layout, rate, extradata, initial padding) and time base on
    /// the output stream; disposition and metadata are the caller's.
    package func configure(_ out: UnsafeMutablePointer<AVStream>) throws {
        try check(avcodec_parameters_from_context(out.pointee.codecpar, encoder), .internal, path: path, "audio encoder parameters")
        out.pointee.codecpar.pointee.codec_tag = 0
        out.pointee.time_base = timeBase
    }

    /// Decodes `packet` (an input packet of this stream, in its own time base) and hands every
    /// packet the encoder produces to `emit`, in `timeBase` (1/sample rate). nil is the end: the
    /// decoder, resampler, fifo and encoder are drained. `emit` may take the packet's data (the
    /// muxer does); the packet is reused afterwards.
    package func transcode(_ packet: Packet?, emit: (Packet) throws -> Void) throws {
        precondition(!closed, "the transcoder is closed")
        if finished { return }
        if let packet {
            var rc = avcodec_send_packet(decoder, packet.pointer)
            while rc == AVERROR_EAGAIN_VALUE {
                try receiveFrames(emit)
                rc = avcodec_send_packet(decoder, packet.pointer)
            }
            if rc < 0 && rc != AVERROR_EOF_VALUE {
                decodeErrors += 1
                // What the packet held is lost: its length of silence keeps the rest in place.
                let p = packet.pointer.pointee
                if p.duration > 0 && inputRate > 0 {
                    try addSilence(av_rescale_q(p.duration, inputTimeBase, AVRational(num: 1, den: inputRate)), emit)
                }
            }
            try receiveFrames(emit)
            return
        }
        finished = true
        avcodec_send_packet(decoder, nil)
        try receiveFrames(emit)
        if let resampler {
            while true {
                let got = try convert(resampler, input: nil, count: 0)
                if got <= 0 { break }
            }
        }
        try encodeQueued(final: true, emit)
        try check(avcodec_send_frame(encoder, nil), .encode, path: path, "flushing the audio encoder failed")
        try drainEncoder(emit)
        if decodeErrors > 0 {
            log(.warning, "\(path): audio stream #\(inputIndex): \(decodeErrors) packet(s) could not be decoded; each became silence of its length")
        }
    }

    // MARK: Decoding

    private func receiveFrames(_ emit: (Packet) throws -> Void) throws {
        while true {
            let rc = avcodec_receive_frame(decoder, decoded.pointer)
            if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return }
            if rc < 0 {
                decodeErrors += 1
                return
            }
            defer { decoded.unref() }
            try take(decoded.pointer, emit)
        }
    }

    private func take(_ frame: UnsafeMutablePointer<AVFrame>, _ emit: (Packet) throws -> Void) throws {
        let f = frame.pointee
        guard f.nb_samples > 0, f.sample_rate > 0 else { return }
        var ts = f.best_effort_timestamp
        if ts == AV_NOPTS { ts = f.pts }
        // The trim, to the sample: `skip` samples of this frame are before the cut, `count` are kept.
        var skip: Int64 = 0
        var count = Int64(f.nb_samples)
        if let trim {
            if pastEnd { return }
            if ts != AV_NOPTS {
                // In microseconds: a Matroska stream's millisecond ticks would round the cut.
                let at = av_rescale_q(ts, inputTimeBase, AV_TIME_BASE_Q_VALUE)
                let sample = AVRational(num: 1, den: f.sample_rate)
                if let cut = trim.cutMicros {
                    let lead = av_rescale_q(cut - at, AV_TIME_BASE_Q_VALUE, sample)
                    if lead >= count { return }
                    skip = max(0, lead)
                }
                if let end = trim.endMicros {
                    let until = av_rescale_q(end - at, AV_TIME_BASE_Q_VALUE, sample)
                    if until <= skip {
                        pastEnd = true
                        return
                    }
                    count = min(count, until)
                }
            }
        }
        if ts != AV_NOPTS { ts -= timelineShift }
        if firstPts == nil {
            let start = ts == AV_NOPTS ? 0 : ts
            let skipped = av_rescale_q(skip, AVRational(num: 1, den: f.sample_rate), timeBase)
            firstPts = av_rescale_q(start, inputTimeBase, timeBase) + skipped
            inputSecondsBase = seconds(start, inputTimeBase) + Double(skip) / Double(f.sample_rate)
            inputRate = f.sample_rate
        } else if ts != AV_NOPTS {
            let jump = seconds(ts, inputTimeBase) - inputSeconds
            if jump > AudioTranscoder.jumpLimit {
                warnJump("a gap of \(format3(jump)) s at \(format3(inputSeconds)) s is filled with silence")
                try ensureResampler(for: frame)
                try addSilence(Int64((jump * Double(inputRate)).rounded()), emit)
            } else if jump < -AudioTranscoder.jumpLimit {
                warnJump("timestamps go back by \(format3(-jump)) s at \(format3(inputSeconds)) s; the overlapping audio is dropped")
                return
            }
        }
        try ensureResampler(for: frame)
        let input = UnsafeMutableRawPointer(f.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        if skip == 0 {
            _ = try convert(resampler!, input: input, count: Int32(count))
        } else {
            // The same planes from the first kept sample on.
            let format = AVSampleFormat(rawValue: f.format)
            let planar = av_sample_fmt_is_planar(format) != 0
            let channels = Int(f.ch_layout.nb_channels)
            let step = Int(skip) * Int(av_get_bytes_per_sample(format)) * (planar ? 1 : channels)
            var planes = (0..<(planar ? channels : 1)).map { input[$0].map { $0 + step } }
            _ = try planes.withUnsafeMutableBufferPointer { try convert(resampler!, input: $0.baseAddress!, count: Int32(count - skip)) }
        }
        advanceInput(by: count - skip)
        try encodeQueued(final: false, emit)
    }

    private var inputSeconds: Double {
        inputSecondsBase + (inputRate > 0 ? Double(inputSamplesAtRate) / Double(inputRate) : 0)
    }

    private func advanceInput(by samples: Int64) {
        inputSamplesAtRate += samples
    }

    private func warnJump(_ what: String) {
        if warnedJump { return }
        warnedJump = true
        log(.warning, "\(path): audio stream #\(inputIndex): \(what) (further jumps are handled the same way)")
    }

    /// `samples` of silence at the input's rate, through the resampler like decoded audio.
    private func addSilence(_ samples: Int64, _ emit: (Packet) throws -> Void) throws {
        guard samples > 0, let resampler, let input = resamplerInput else { return }
        var left = samples
        let chunk = Int64(max(input.rate, 1024))
        let silence = Frame()
        silence.pointer.pointee.format = input.format
        silence.pointer.pointee.sample_rate = input.rate
        silence.pointer.pointee.nb_samples = Int32(min(left, chunk))
        var layout = input.layout
        try check(av_channel_layout_copy(&silence.pointer.pointee.ch_layout, &layout), .internal, path: path, "channel layout")
        try check(av_frame_get_buffer(silence.pointer, 0), .internal, path: path, "out of memory")
        av_samples_set_silence(silence.pointer.pointee.extended_data, 0, silence.pointer.pointee.nb_samples,
                               input.layout.nb_channels, AVSampleFormat(rawValue: input.format))
        let data = UnsafeMutableRawPointer(silence.pointer.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        while left > 0 {
            let n = Int32(min(left, chunk))
            _ = try convert(resampler, input: data, count: n)
            advanceInput(by: Int64(n))
            left -= Int64(n)
            try encodeQueued(final: false, emit)
        }
    }

    // MARK: Resampling

    /// A resampler from the frame's format, layout and rate to the encoder's; a new one (after
    /// draining the old) when they change mid-stream.
    private func ensureResampler(for frame: UnsafeMutablePointer<AVFrame>) throws {
        let f = frame.pointee
        var layout = AVChannelLayout()
        if f.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || f.ch_layout.nb_channels == 0 {
            av_channel_layout_default(&layout, max(f.ch_layout.nb_channels, decoder.pointee.ch_layout.nb_channels))
        } else {
            var source = f.ch_layout
            try check(av_channel_layout_copy(&layout, &source), .internal, path: path, "channel layout")
        }
        if var current = resamplerInput {
            if current.format == f.format && current.rate == f.sample_rate && av_channel_layout_compare(&current.layout, &layout) == 0 {
                av_channel_layout_uninit(&layout)
                return
            }
            // Drain what the old one holds, then start the input clock anew at the new rate.
            if let old = resampler {
                while try convert(old, input: nil, count: 0) > 0 {}
            }
            swr_free(&resampler)
            av_channel_layout_uninit(&current.layout)
            resamplerInput = nil
            inputSecondsBase = inputSeconds
            inputSamplesAtRate = 0
        }
        inputRate = f.sample_rate
        var swr: OpaquePointer?
        var outLayout = encoder.pointee.ch_layout
        let rc = swr_alloc_set_opts2(&swr, &outLayout, encoder.pointee.sample_fmt, encoder.pointee.sample_rate,
                                     &layout, AVSampleFormat(rawValue: f.format), f.sample_rate, 0, nil)
        if rc < 0 || swr == nil || swr_init(swr) < 0 {
            swr_free(&swr)
            av_channel_layout_uninit(&layout)
            throw GPUEncodeError(.encode, path: path, "audio stream #\(inputIndex): cannot convert its samples for the \(codec.displayName) encoder")
        }
        resampler = swr
        resamplerInput = (f.format, layout, f.sample_rate)
    }

    /// Converts `count` input samples (nil: what the resampler still holds) into the fifo;
    /// returns the number of samples queued.
    @discardableResult
    private func convert(_ swr: OpaquePointer, input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int32) throws -> Int32 {
        let capacity = max(swr_get_out_samples(swr, count), 0) + 32
        if converted == nil || converted!.pointer.pointee.nb_samples < capacity {
            let frame = Frame()
            frame.pointer.pointee.format = encoder.pointee.sample_fmt.rawValue
            frame.pointer.pointee.sample_rate = encoder.pointee.sample_rate
            frame.pointer.pointee.nb_samples = max(capacity, frameSize * 4)
            try check(av_channel_layout_copy(&frame.pointer.pointee.ch_layout, &encoder.pointee.ch_layout), .internal, path: path, "channel layout")
            try check(av_frame_get_buffer(frame.pointer, 0), .internal, path: path, "out of memory")
            converted = frame
        }
        let out = converted!.pointer
        let got = swr_convert(swr, out.pointee.extended_data, out.pointee.nb_samples, input, count)
        try check(got, .encode, path: path, "audio stream #\(inputIndex): resampling failed")
        if got > 0 {
            sanitize(out, count: got)
            let planes = UnsafeMutableRawPointer(out.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            let written = av_audio_fifo_write(fifo, planes, got)
            if written < got { throw GPUEncodeError(.internal, path: path, "out of memory") }
        }
        return got
    }

    /// NaN and infinite samples (damaged float PCM) become silence and absurd ones (beyond ±1000, where
    /// full scale is ±1) are clamped: the AAC encoder refuses a whole frame that holds one ("Input
    /// contains (near) NaN/+-Inf", EINVAL), which would end the run for one bad sample.
    private func sanitize(_ frame: UnsafeMutablePointer<AVFrame>, count: Int32) {
        let format = AVSampleFormat(rawValue: frame.pointee.format)
        guard format == AV_SAMPLE_FMT_FLTP || format == AV_SAMPLE_FMT_FLT else { return }
        let channels = Int(frame.pointee.ch_layout.nb_channels)
        let planar = format == AV_SAMPLE_FMT_FLTP
        let planes = planar ? channels : 1
        let perPlane = Int(count) * (planar ? 1 : channels)
        for p in 0..<planes {
            guard let data = frame.pointee.extended_data[p] else { continue }
            let samples = UnsafeMutableRawPointer(data).assumingMemoryBound(to: Float.self)
            for i in 0..<perPlane where !(abs(samples[i]) <= 1000) {
                samples[i] = samples[i].isFinite ? (samples[i] > 0 ? 1000 : -1000) : 0
            }
        }
    }

    // MARK: Encoding

    /// Sends whole encoder frames from the fifo (and, at the end, the shorter last one).
    private func encodeQueued(final: Bool, _ emit: (Packet) throws -> Void) throws {
        guard let firstPts else { return }
        while true {
            let available = av_audio_fifo_size(fifo)
            if available <= 0 || (available < frameSize && !final) { return }
            let n = min(frameSize, available)
            let frame = Frame()
            let f = frame.pointer
            f.pointee.nb_samples = n
            f.pointee.format = encoder.pointee.sample_fmt.rawValue
            f.pointee.sample_rate = encoder.pointee.sample_rate
            try check(av_channel_layout_copy(&f.pointee.ch_layout, &encoder.pointee.ch_layout), .internal, path: path, "channel layout")
            try check(av_frame_get_buffer(f, 0), .internal, path: path, "out of memory")
            let planes = UnsafeMutableRawPointer(f.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            guard av_audio_fifo_read(fifo, planes, n) == n else { throw GPUEncodeError(.internal, path: path, "audio queue read failed") }
            // The sample count, not the input's packets, gives every frame after the first its time.
            f.pointee.pts = firstPts + sentSamples
            sentSamples += Int64(n)
            try check(avcodec_send_frame(encoder, f), .encode, path: path, "audio stream #\(inputIndex): encoding failed")
            try drainEncoder(emit)
        }
    }

    private func drainEncoder(_ emit: (Packet) throws -> Void) throws {
        while true {
            let rc = avcodec_receive_packet(encoder, encoded.pointer)
            if rc == AVERROR_EAGAIN_VALUE || rc == AVERROR_EOF_VALUE { return }
            try check(rc, .encode, path: path, "audio stream #\(inputIndex): encoding failed")
            defer { encoded.unref() }
            if muxerOffset != 0 {
                if encoded.pointer.pointee.pts != AV_NOPTS { encoded.pointer.pointee.pts += muxerOffset }
                if encoded.pointer.pointee.dts != AV_NOPTS { encoded.pointer.pointee.dts += muxerOffset }
            }
            try emit(encoded)
        }
    }

    // MARK: Choices

    /// The input's rate where the encoder takes it, else the nearest higher one it takes (the
    /// highest it takes when none is higher).
    package static func closestRate(_ rate: Int32, supported: [Int32]) -> Int32 {
        if supported.isEmpty || supported.contains(rate) { return rate }
        return supported.filter { $0 > rate }.min() ?? supported.max()!
    }

    /// The channel layout a re-encode gets for `channels` input channels, and its channel count.
    /// Both codecs get the standard layout for the count (AAC's channel configurations, Opus's
    /// Vorbis mapping, which libopus requires); libswresample moves channels that have another
    /// name (5.1(side)'s side pair becomes 5.1's rear pair) and downmixes counts the codec has no
    /// layout for (AAC: 7 channels to 5.1; both: more than 8 to 7.1).
    package static func layout(for channels: Int, codec: AudioCodec) -> (name: String, channels: Int) {
        let aac: [Int: String] = [1: "mono", 2: "stereo", 3: "3.0", 4: "4.0", 5: "5.0", 6: "5.1", 8: "7.1"]
        let opus: [Int: String] = [1: "mono", 2: "stereo", 3: "3.0", 4: "quad", 5: "5.0", 6: "5.1", 7: "6.1", 8: "7.1"]
        let table = codec == .aac ? aac : opus
        let count = (1...min(max(channels, 1), 8)).reversed().first { table[$0] != nil }!
        return (table[count]!, count)
    }

    private static func list<T: Equatable>(_ pointer: UnsafePointer<T>?, end: T) -> [T] {
        guard var p = pointer else { return [] }
        var values: [T] = []
        while p.pointee != end {
            values.append(p.pointee)
            p += 1
        }
        return values
    }
}

private func format3(_ v: Double) -> String {
    String((v * 1000).rounded() / 1000)
}
