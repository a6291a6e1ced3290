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

    /// Starts the stages (the pipelined ones' threads, or the GPU context of the sequential run).
    init(source: VideoSource, gpu: GPUStage?, encode: EncodeStage, outputWidth: Int, outputHeight: Int, sequential: Bool,
         run: RunState) throws {
        self.source = source
        self.gpu = gpu
        self.encode = encode
        self.run = run
        crop = gpu == nil ? (Int32(outputWidth), Int32(outputHeight)) : nil
        stages = sequential ? try SequentialVideoStages(gpu: gpu, encode: encode, run: run)
            : try PipelinedVideoStages(gpu: gpu, encode: encode, run: run)
    }

    func handle(_ packet: Packet) throws {
        source.send(packet)
        try passDecodedFrames()
    }

    /// The decoder's last frames (unless the run failed), then the stages finish.
    func finish() {
        if !run.failed {
            source.send(nil)
            do { try passDecodedFrames() } catch { run.fail(error) }
        }
        stages.finish()
    }

    private func passDecodedFrames() throws {
        while let frame = try source.receive() {
            framesDecoded += 1
            if let crop {
                frame.width = crop.width
                frame.height = crop.height
            }
            try stages.push(frame)
        }
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
