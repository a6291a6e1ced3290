/// A transcode whose output is a picture (PNG, JPEG): one frame, as ffmpeg's `-frames:v 1 out.png`.
/// It takes what applies to one frame: the preset and --filter, the frame's time (--start), the
/// size (--width, --height, --size, --max-width, --max-height: the aspect rules and the Lanczos-3
/// scaler of a video output), and how HDR becomes SDR (--tonemap, --target-peak, --peak-detect,
/// --dolby-vision).
/// What is about encoding video, audio, time or containers has nothing to act on: `refusedSettings`
/// names those given, for a usage error rather than a silent no-op.
public struct PictureOutput {
    /// The settings a picture output takes (EncodeSetting keys); every other one given is refused.
    public static let settingKeys: Set<String> = ["width", "height", "size", "maxWidth", "maxHeight", "start",
                                                  "hdr", "tonemap", "targetPeak", "peakDetect", "dolbyVision"]

    public var input: String
    public var preset: Preset
    /// Seconds from the start of the input (a movie's frame; ignored for a still); nil: the
    /// representative frame (`Preview.representativeTime`).
    public var time: Double?
    public var scale = ScaleRequest()
    public var toneMapping = ToneMapping()
    public var dolbyVision = DolbyVisionMode.apply
    public var gpu: GPUSelection = .auto

    public init(input: String, preset: Preset) {
        self.input = input
        self.preset = preset
    }

    /// The flags of the settings in `given` (the command line's) that a picture output cannot
    /// take, as they are spelled on the command line; `--hdr keep` among them (a picture is SDR).
    public static func refusedSettings(_ given: EncodeOverrides) -> [String] {
        var refused = EncodeSetting.all.filter { !settingKeys.contains($0.key) && $0.jsonValue(of: given) != nil }.map(\.flag)
        if given.hdr == .keep { refused.append("--hdr keep") }
        return refused
    }

    /// The picture: the frame through the preset, then scaled. A size beyond the largest picture
    /// (`PictureSize.Limit.picture`) is refused before the frame is rendered: 64 when asked for,
    /// 67 when the preset makes it, 66 when the input is that large itself.
    public func render() throws -> Preview.Result {
        let session = try Preview.Session(input: input, at: time, gpu: gpu)
        let made = session.outputSize(of: preset.filters)
        var filters = preset.filters
        if let target = scale.target(width: made.width, height: made.height, sampleAspect: session.sampleAspect) {
            try PictureSize.checkScaled(target, from: made, input: input, limit: .picture)
            filters += ScaleFilter.instances(width: target.width, height: target.height)
        } else if !PictureSize.fits(made.width, made.height, .picture) {
            if PictureSize.fits(session.width, session.height, .picture) {
                throw GPUEncodeError(.preset, path: preset.origin, "the preset makes the \(session.width)x\(session.height) picture \(made.width)x\(made.height); gpuencode makes pictures \(PictureSize.limitText(.picture))")
            }
            throw GPUEncodeError(.input, path: input, "is \(session.width)x\(session.height); gpuencode makes pictures \(PictureSize.limitText(.picture)) (--max-width or --max-height makes it smaller)")
        }
        let image = try session.render(filters, light: preset.light, toneMapping: toneMapping, dolbyVision: dolbyVision)
        return Preview.Result(image: image, time: session.time, renderer: session.renderer)
    }
}
