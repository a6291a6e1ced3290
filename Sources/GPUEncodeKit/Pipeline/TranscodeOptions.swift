// What a transcode is asked to do (`TranscodeOptions`) and what it reports (`TranscodeSummary`).

public struct TranscodeOptions: Sendable {
    public var input: String
    public var output: String
    /// The output's folder already opened (a batch's --out-dir, walked without following links):
    /// the output is created and renamed into place relative to it. Nil opens `output`'s folder.
    package var outputFolder: ContainedDirectory?
    public var preset: Preset
    public var overwrite = false
    public var encoder = EncoderSettings()
    /// Video decoding: software (default) or NVDEC through FFmpeg's cuda hwaccel.
    public var hwaccel: HardwareAcceleration = .none
    /// NVDEC frames stay on the GPU: copied from CUDA memory into the GL textures (CUDA-GL
    /// interop) where the GL context is on the same NVIDIA device. False downloads them to system
    /// memory and uploads them, as before interop (for comparison).
    public var cudaInterop = true
    /// With `hwaccel`: decode on this CUDA device, shared with other transcodes (a batch's jobs),
    /// instead of making one for this run.
    public var cudaDevice: CUDADevice?
    public var gpu: GPUSelection = .auto
    public var renderPath: RenderPath = .direct
    /// How the render graph is compiled (`--no-optimize`: the reference, without the optional passes).
    public var compile = CompileOptions()
    /// Receives the render graph after each compiler pass (`--passes`), once the renderer is made.
    public var passTrace: (@Sendable ([String]) -> Void)?
    /// Pixel buffer objects or client memory, and copy threads: the renderer's choice unless measuring.
    public var transfer = TransferOptions()
    /// Decode, GPU and encode one after another on the calling thread instead of pipelined.
    public var sequential = false
    /// Decoder threads; 0 lets libavcodec choose.
    public var decoderThreads = 0
    public var progress: ProgressReporter?
    /// Take the GL context from a process-wide pool and give it back afterwards, instead of making
    /// and destroying one (batch runs: memory stays flat over thousands of jobs).
    public var reuseGPUContext = false
    /// Render on this context (its thread), shared with other transcodes, instead of on a context of
    /// the run's own (batch runs on hardware GPUs; `GLThread` says why).
    public var sharedGL: GLThread?
    /// Receives warnings and (when verbose) notes, one line each.
    public var log: @Sendable (LogLevel, String) -> Void = { _, _ in }
    /// Receives each frame's measurements (`averageColor` filters), in frame order: the frame's
    /// index, its time in seconds from the start, and name → values.
    public var statistics: (@Sendable (Int, Double, [(name: String, value: [Double])]) -> Void)?
    /// Receives the progress after each frame out of the encoder (frames, position and length in
    /// seconds, bytes written); for callers with their own progress display (batch runs).
    public var onFrame: (@Sendable (EncodeProgress) -> Void)?
    /// Collects what the run does for `--json` (streams, settings, GPU, warnings, result); nil: nothing collected.
    public var report: TranscodeReport?
    /// Polled with the SIGINT/SIGTERM flag: true stops the run as if interrupted (no output written).
    public var shouldStop: (@Sendable () -> Bool)?

    public init(input: String, output: String, preset: Preset) {
        self.input = input
        self.output = output
        self.preset = preset
    }
}

public struct TranscodeSummary: Sendable {
    public var frames: Int
    public var renderer: String
    public var seconds: Double
    public var decodeErrors: Int
    /// Frames the decoder gave (frames in; `frames` is frames out).
    public var framesDecoded: Int = 0
    /// Seconds the GPU and encode stages were busy (pipelined runs with a GPU stage), else nil.
    public var stagesBusy: (gpu: Double, encode: Double)?
}
