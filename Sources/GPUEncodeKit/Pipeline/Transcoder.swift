/// decode → GPU filter graph → encode, with every other stream copied: FFmpeg's
/// doc/examples/transcode.c in shape. One loop reads the input's packets and hands each to its
/// stream's handler (TranscodeSetup.swift maps the streams); then every handler finishes and the
/// output is completed. Video frames keep their own timestamps end to end (rescaled at each
/// hand-off: input stream → encoder → output stream).
public enum Transcoder {
    public static func run(_ options: TranscodeOptions) throws -> TranscodeSummary {
        // The settings and filters are known before anything can fail (the job updates them).
        options.report?.describe(options)
        try checkOutput(options)
        let started = monotonicSeconds()
        let run = RunState(output: options.output, shouldStop: options.shouldStop)
        let job = try TranscodeJob(options, run: run)
        do {
            while !run.failed {
                run.checkInterrupt()
                guard let packet = try job.input.read() else { break }
                try job.handlers[packet.streamIndex]?.handle(packet)
                if job.pastEnd { break }
            }
        } catch {
            // A signal that stopped a read (a FIFO) is reported as this run's interruption.
            run.checkInterrupt()
            run.fail(error)
        }
        // After a failure too: a handler stops its threads and lets go of what it holds. The GL
        // context and the encoders close here, before the output is renamed into place: what a
        // codec does while it closes (libx265 frees its lookahead, where a heap overrun shows)
        // then ends a run that leaves no output. After the rename only the input's demuxer and
        // decoder and the finished muxer's context are freed, and --json probes the output.
        for handler in job.handlers.compactMap({ $0 }) {
            do { try handler.finish() } catch { run.fail(error) }
        }
        run.checkInterrupt()
        try run.throwIfFailed()
        if job.video.framesEncoded == 0 && !job.trim.isWhole && job.video.framesBeforeStart > 0 {
            throw TranscodeJob.startPastEnd(job.trim.range, length: job.input.durationSeconds, path: options.input)
        }
        if job.video.framesEncoded == 0 {
            throw GPUEncodeError(.inputDecode, path: options.input, "no video frame could be decoded")
        }
        try job.output.finish()
        let summary = job.summary(seconds: monotonicSeconds() - started)
        options.report?.result(result(summary, output: options.output))
        return summary
    }

    /// `--dry-run`: what `run` would do, found the way it finds it, and nothing written. Every check
    /// a run makes before its first frame is made (the output's path and container, the input
    /// opened and its streams mapped, the encoders opened, the GPU context made and the filter
    /// chain compiled on it), so a dry run fails with the code the run would have; no output file,
    /// temporary or stale-temporary cleanup. What was found goes to `options.report`.
    public static func plan(_ options: TranscodeOptions) throws {
        options.report?.describe(options)
        try checkOutput(options)
        let run = RunState(output: options.output, shouldStop: options.shouldStop)
        let job = try TranscodeJob(options, run: run, planOnly: true)
        if let gpu = job.gpuStage {
            try gpu.open()
            gpu.close()
        }
        // The setup's warnings wait for the first encoded frame in a run; a plan has none.
        job.encodeStage.setupWarnings.release()
        run.checkInterrupt()
        try run.throwIfFailed()
    }

    /// The `result` member of `--json`: timings, frames, the output's size and bitrate.
    static func result(_ s: TranscodeSummary, output: String) -> JSONValue {
        let facts = MediaFacts.probe(output)
        var stages: JSONValue = .null
        if let busy = s.stagesBusy { stages = .object([("gpuBusySeconds", .number(busy.gpu)), ("encodeBusySeconds", .number(busy.encode))]) }
        return .object([("seconds", .number(s.seconds)), ("fps", .number(Double(s.frames) / max(s.seconds, 1e-6))),
                        ("framesIn", .number(s.framesDecoded)), ("framesOut", .number(s.frames)), ("decodeErrors", .number(s.decodeErrors)),
                        ("stages", stages), ("renderer", .string(s.renderer)),
                        ("outputSize", facts?.bytes.map { .number(Double($0)) } ?? .null),
                        ("outputDuration", facts?.duration.map { .number($0) } ?? .null),
                        ("outputBitrate", facts?.bitrate.map { .number($0.rounded()) } ?? .null)])
    }

    /// What can be wrong with the output before the input is opened: the paths (checkPaths), then
    /// a container that cannot hold the codec (H.264 in .webm: 64).
    public static func checkOutput(_ options: TranscodeOptions) throws {
        try checkPaths(options)
        try checkOutputContainer(path: options.output, codec: options.encoder.codec)
    }

    static func checkPaths(_ o: TranscodeOptions) throws {
        if o.input == o.output { throw GPUEncodeError(.usage, path: o.output, "output is the input file") }
        if let a = fileIdentity(o.input), let b = fileIdentity(o.output), a == b {
            throw GPUEncodeError(.usage, path: o.output, "output is the input file (same file through another path)")
        }
        if fileExists(o.output) {
            if isDirectory(o.output) { throw GPUEncodeError(.outputCreate, path: o.output, "is a directory") }
            if !o.overwrite { throw GPUEncodeError(.outputCreate, path: o.output, "already exists (use -y to overwrite)") }
        }
    }
}
