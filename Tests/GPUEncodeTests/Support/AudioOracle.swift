import Foundation
import XCTest

/// ffprobe's and ffmpeg's view of audio streams: what a stream is, when its first decoded sample plays,
/// its decoded samples, and how far the content of one stream sits from another's on the timeline.
struct AudioStreamInfo {
    let codec: String
    let channels: Int
    let layout: String?
    let sampleRate: Int
    let startTime: Double?
    let duration: Double?
    let tags: [String: String]
}

enum AudioOracle {
    /// The decoding rate of `pcm`: every stream is resampled to it (time-aligned) so two can be compared.
    static let rate = 48000

    static func streams(_ file: URL) throws -> [AudioStreamInfo] {
        let json = try Oracle.ffprobeJSON(["-select_streams", "a", "-show_entries",
                                           "stream=codec_name,channels,channel_layout,sample_rate,start_time,duration:stream_tags", file.path])
        return (json["streams"] as? [[String: Any]] ?? []).map { s in
            func number(_ key: String) -> Double? { (s[key] as? String).flatMap(Double.init) }
            return AudioStreamInfo(codec: s["codec_name"] as? String ?? "?",
                                    channels: (s["channels"] as? NSNumber)?.intValue ?? 0,
                                    layout: s["channel_layout"] as? String,
                                    sampleRate: Int(number("sample_rate") ?? 0),
                                    startTime: number("start_time"), duration: number("duration"),
                                    tags: (s["tags"] as? [String: String]) ?? [:])
        }
    }

    /// When the first decoded sample of audio stream `track` plays (after what the container says to
    /// skip: edit lists, Opus pre-skip, Matroska CodecDelay), in seconds. Up to 200 packets are read: a
    /// trimmed Opus copy's pre-skip hides its first 240 ms (TrimMatroskaTests), 96 packets at 2.5 ms.
    static func firstSampleTime(_ file: URL, track: Int = 0) throws -> Double {
        let json = try Oracle.ffprobeJSON(["-select_streams", "a:\(track)", "-show_entries", "frame=pts_time",
                                           "-read_intervals", "%+#200", file.path])
        guard let frame = (json["frames"] as? [[String: Any]])?.first, let text = frame["pts_time"] as? String,
              let time = Double(text) else {
            throw OracleError("no decoded audio frame in \(file.lastPathComponent) a:\(track)")
        }
        return time
    }

    /// Where the edit list of MP4/MOV track `track` (0-based, in file order) ends, in seconds: the sum of
    /// its edits' durations in the movie timescale, as FFmpeg's mov demuxer reads them (its trace log).
    /// nil when the track has no edit list.
    static func editListEnd(_ file: URL, track: Int) throws -> Double? {
        let result = try Oracle.run("ffprobe", ["-v", "trace", file.path])
        var movieScale: Double?
        var current = -1
        var total: Double?
        for line in result.stderrLines {
            if movieScale == nil, let r = line.range(of: "time scale = ") { movieScale = Double(line[r.upperBound...]) }
            if let r = line.range(of: "track["), let close = line[r.upperBound...].firstIndex(of: "]"), line.contains("edit_count") {
                current = Int(line[r.upperBound..<close]) ?? -1
                if current == track { total = 0 }
            } else if current == track, let r = line.range(of: "] duration="), line.contains(" time=") {
                let value = line[r.upperBound...].prefix { $0.isNumber }
                total = (total ?? 0) + (Double(value) ?? .nan)
            } else if !line.contains("] duration=") {
                current = -1
            }
        }
        guard let total, let movieScale, movieScale > 0 else { return nil }
        return total / movieScale
    }

    /// The first channel of audio stream `track`, decoded and resampled to `rate`: sample i plays at
    /// firstSampleTime + i / rate.
    static func pcm(_ file: URL, track: Int = 0) throws -> [Float] {
        let data = try Oracle.runCheckedData("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:a:\(track)",
                                                        "-af", "pan=mono|c0=c0,aresample=\(rate)", "-f", "f32le", "-"])
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Nothing at all on stderr when every audio stream is decoded.
    static func decodeErrors(_ file: URL) throws -> String {
        let result = try Oracle.run("ffmpeg", ["-nostdin", "-v", "error", "-i", file.path, "-map", "0:a", "-f", "null", "-"])
        return result.stderr.trimmingCharacters(in: .whitespacesAndNewlines) + (result.status == 0 ? "" : " (exit \(result.status))")
    }

    /// A decoded stream placed on the timeline.
    struct Timeline {
        let start: Double
        let samples: [Float]
        var end: Double { start + Double(samples.count) / Double(AudioOracle.rate) }

        init(_ file: URL, track: Int = 0) throws {
            start = try AudioOracle.firstSampleTime(file, track: track)
            samples = try AudioOracle.pcm(file, track: track)
        }

        init(start: Double, samples: [Float]) {
            self.start = start
            self.samples = samples
        }

        /// `length` seconds from absolute time `at`; nil where the stream does not cover it.
        func window(at: Double, length: Double) -> ArraySlice<Float>? {
            let first = Int(((at - start) * Double(AudioOracle.rate)).rounded())
            let count = Int(length * Double(AudioOracle.rate))
            guard first >= 0, first + count <= samples.count else { return nil }
            return samples[first..<(first + count)]
        }
    }

    /// Where the content of `output` sits against `input` around absolute time `at`: positive when the
    /// output plays it later. Searched within ±`maxLag` seconds by normalised cross-correlation over a
    /// `length`-second window; `correlation` is the peak (1 for identical waveforms).
    static func contentOffset(_ input: Timeline, _ output: Timeline, at: Double, length: Double = 0.25,
                              maxLag: Double = 0.03) throws -> (seconds: Double, correlation: Double) {
        let lagCount = Int(maxLag * Double(rate))
        guard let reference = input.window(at: at, length: length),
              let wide = output.window(at: at - maxLag, length: length + 2 * maxLag) else {
            throw OracleError("the streams do not cover \(at) s ± \(maxLag) s (input \(input.start)...\(input.end), output \(output.start)...\(output.end))")
        }
        let x = Array(reference), y = Array(wide)
        var best = (lag: 0, value: -Double.infinity)
        x.withUnsafeBufferPointer { x in
            y.withUnsafeBufferPointer { y in
                var energyX: Float = 0
                for v in x { energyX += v * v }
                for shift in 0...(2 * lagCount) {
                    var dot: Float = 0, energyY: Float = 0
                    for i in 0..<x.count {
                        let v = y[shift + i]
                        dot += x[i] * v
                        energyY += v * v
                    }
                    let value = Double(dot) / max(Double(energyX * energyY).squareRoot(), 1e-12)
                    if value > best.value { best = (shift - lagCount, value) }
                }
            }
        }
        return (Double(best.lag) / Double(rate), best.value)
    }
}
