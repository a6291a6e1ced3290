/// How decoded frames travel through the GPU stage (absent without filters) to the encoder.
/// Both ways give the same bytes: `PipelinedVideoStages` overlaps the stages on threads,
/// `SequentialVideoStages` (`--deterministic`) is the one-frame-at-a-time reference.
protocol VideoStages: AnyObject {
    /// A decoded frame (on the thread that reads the input).
    func push(_ frame: Frame) throws
    /// No more frames: the stages give out what they hold, unless the run failed, and stop.
    /// Failures go to the run (`RunState`).
    func finish()
    /// Seconds the GPU and encode stages spent working, not waiting on each other (pipelined
    /// runs, after `finish`); nil for the sequential run, where nothing waits.
    var busy: (gpu: Double, encode: Double)? { get }
}

/// Every stage on the calling thread, one frame at a time: the reference the pipelined run must
/// reproduce byte for byte. Each frame's readback finishes before the next one starts.
final class SequentialVideoStages: VideoStages {
    private let gpu: GPUStage?
    private let encode: EncodeStage
    private let run: RunState

    /// Makes the GL context on the calling thread.
    init(gpu: GPUStage?, encode: EncodeStage, run: RunState) throws {
        self.gpu = gpu
        self.encode = encode
        self.run = run
        do { try gpu?.open() } catch {
            gpu?.close()
            throw error
        }
    }

    func push(_ frame: Frame) throws {
        run.checkInterrupt()
        if run.failed { return }
        for out in try gpu?.process(frame) ?? [frame] { try encode.encode(out) }
    }

    var busy: (gpu: Double, encode: Double)? { nil }

    func finish() {
        defer { gpu?.close() }
        if run.failed { return }
        do {
            for out in try gpu?.flush() ?? [] { try encode.encode(out) }
            try encode.finish()
        } catch {
            run.fail(error)
        }
    }
}

/// Decode (the calling thread), GPU and encode on three threads joined by bounded queues of
/// `queueCapacity` frames, so decode, GL work and x264 overlap and memory stays constant whatever
/// the length. The
/// GL context is made on the GPU thread while the first frames decode (on NVIDIA it takes a few
/// hundred milliseconds). The first failure closes both queues: the stages drain them and stop.
final class PipelinedVideoStages: VideoStages {
    private let gpu: GPUStage?
    private let encode: EncodeStage
    private let run: RunState
    /// Frames each queue holds. One is enough for the three stages to overlap (decode frame n+2
    /// while the GPU renders n+1 and x264 takes n); the decoder (frame threads) and x264 (its
    /// lookahead) buffer frames of their own anyway. Each slot is a 3 MiB frame at 1080p that the
    /// decoder's pool or the output `FramePool` must hold besides: 3 slots a queue cost 9-12 MiB
    /// more peak RSS than 1, with no measurable gain in speed (docs/PERFORMANCE.md, NVDEC frames).
    static let queueCapacity = 1
    private let toGPU = BoundedQueue<Frame>(capacity: queueCapacity)
    private let toEncoder = BoundedQueue<Frame>(capacity: queueCapacity)
    private var gpuThread: WorkerThread?
    private var encodeThread: WorkerThread?
    /// Seconds each stage spent working (not waiting on a queue), for -v: shows which one bounds
    /// the run. Each is written by its stage's thread and read after that thread is joined.
    private var gpuBusy = 0.0
    private var encodeBusy = 0.0

    init(gpu: GPUStage?, encode: EncodeStage, run: RunState) throws {
        self.gpu = gpu
        self.encode = encode
        self.run = run
        run.onFailure { [toGPU, toEncoder] in
            toGPU.close()
            toEncoder.close()
        }
        encodeThread = try WorkerThread(name: "gpuencode-x264") { [self] in encodeLoop() }
        do {
            if let gpu { gpuThread = try WorkerThread(name: "gpuencode-gl") { [self] in gpuLoop(gpu) } }
        } catch {
            // The encoder stage is running: stop it before reporting.
            run.fail(error)
            encodeThread?.join()
            encodeThread = nil
            throw error
        }
    }

    var busy: (gpu: Double, encode: Double)? { (gpuBusy, encodeBusy) }

    func push(_ frame: Frame) {
        // Refused once the queue is closed by a failure: the frame goes, and the loop stops.
        (gpu == nil ? toEncoder : toGPU).push(frame)
    }

    func finish() {
        toGPU.close()
        if let gpuThread { gpuThread.join() } else { toEncoder.close() }
        encodeThread?.join()
        // The threads' closures hold this object: let them go.
        gpuThread = nil
        encodeThread = nil
        // Frames left in the queues after a failure are freed now, not with the queues.
        toGPU.drain { _ in }
        toEncoder.drain { _ in }
    }

    private func gpuLoop(_ gpu: GPUStage) {
        // The renderer (and its GL objects) goes before the context, then the encoder hears the end.
        defer {
            gpu.close()
            toEncoder.close()
        }
        do {
            try gpu.open()
            while let frame = toGPU.pop() {
                if run.failed { continue }
                let t0 = monotonicSeconds()
                for out in try gpu.process(frame) { toEncoder.push(out) }
                gpuBusy += monotonicSeconds() - t0
            }
            if run.failed { return }
            for out in try gpu.flush() { toEncoder.push(out) }
        } catch {
            run.fail(error)
        }
    }

    private func encodeLoop() {
        do {
            while let frame = toEncoder.pop() {
                if run.failed { continue }
                run.checkInterrupt()
                let t0 = monotonicSeconds()
                try encode.encode(frame)
                encodeBusy += monotonicSeconds() - t0
            }
            if run.failed { return }
            try encode.finish()
        } catch {
            run.fail(error)
        }
    }
}
