/// The video stream: decoded on the thread that reads the input, then through the GPU stage
/// (none without filters: decode → encode) to the encoder, by `VideoStages`: pipelined on threads,
/// or one frame at a time (`--deterministic`). Frames keep their own timestamps end to end.
final class VideoTranscodeHandler: OutputStreamHandler {
    private let source: VideoSource
    private let stages: VideoStages
    private let gpu: GPUStage?
    private let encode: EncodeStage
    private let run: RunState
    /// Without a GPU stage, the encoded size: odd sizes are cropped by narrowing each decoded
    /// frame over its buffer.
    private let crop: (width: Int32, height: Int32)?
    /// `--start`/`--to`/`-t` in the video's ticks (TrimPlan); nil encodes every frame.
    private let window: TrimWindow?
    /// The first frame kept: ffmpeg's trim filter counts the length from it.
    private var firstKept: Int64?
    /// Past the trim's end: later packets are not even decoded.
    private(set) var isDone = false
    /// Frames decoded before the trim's start and dropped (decoding starts at the keyframe before it).
    private(set) var framesBeforeStart = 0

    /// Starts the stages (the pipelined ones' threads, or the GPU context of the sequential run).
    init(source: VideoSource, gpu: GPUStage?, encode: EncodeStage, outputWidth: Int, outputHeight: Int, sequential: Bool,
         run: RunState, window: TrimWindow? = nil) throws {
        self.source = source
        self.window = window
        self.gpu = gpu
        self.encode = encode
        self.run = run
        crop = gpu == nil ? (Int32(outputWidth), Int32(outputHeight)) : nil
        stages = sequential ? try SequentialVideoStages(gpu: gpu, encode: encode, run: run)
            : try PipelinedVideoStages(gpu: gpu, encode: encode, run: run)
    }

    func handle(_ packet: Packet) throws {
        if isDone { return }
        source.send(packet)
        try passDecodedFrames()
    }

    /// The decoder's last frames (unless the run failed), then the stages finish and the encoder
    /// closes: before the output is renamed into place (Transcoder.run), not when the job goes.
    func finish() {
        if !run.failed {
            source.send(nil)
            do { try passDecodedFrames() } catch { run.fail(error) }
        }
        stages.finish()
        encode.encoder.close()
    }

    private func passDecodedFrames() throws {
        while let frame = try source.receive() {
            if let window, !keep(frame, window) { continue }
            framesDecoded += 1
            if let crop {
                frame.width = crop.width
                frame.height = crop.height
            }
            try stages.push(frame)
        }
    }

    /// Whether a decoded frame is inside the trim: the first at or after the cut, and then every
    /// frame that starts less than the length after that first one (ffmpeg's trim filter, which
    /// the ffmpeg CLI puts first in the graph, so the deinterlacer too sees only these frames).
    private func keep(_ frame: Frame, _ w: TrimWindow) -> Bool {
        if isDone { return false }
        if let cut = w.cut, frame.pts < cut {
            framesBeforeStart += 1
            return false
        }
        let first = firstKept ?? frame.pts
        firstKept = first
        if let length = w.length, frame.pts - first >= length {
            isDone = true
            return false
        }
        return true
    }

    var framesEncoded: Int { encode.frames }

    /// Frames the decoder gave (before deinterlacing makes two of one, or anything drops one).
    private(set) var framesDecoded = 0

    /// Seconds the GPU and encode stages were busy (pipelined runs), else nil.
    var busy: (gpu: Double, encode: Double)? { stages.busy }

    var rendererName: String { gpu?.rendererName ?? "no GPU stage" }

    /// The `-v` line saying which stage bounds the run (pipelined runs), or nil.
    func stagesBusy(wall: Double) -> String? {
        guard let (gpu, encode) = stages.busy else { return nil }
        let perFrame = gpu * 1000 / Double(framesEncoded)
        return "stages busy: GPU \(format(gpu, 2)) s (\(format(perFrame, 2)) ms/frame), encode \(format(encode, 2)) s, of \(format(wall, 2)) s wall"
    }
}
