/// The picture sizes gpuencode carries from the decoder to the encoder, checked as soon as the
/// decoder knows them: before the encoder opens and before any frame is encoded, so a picture that
/// cannot be made fails with one clear line instead of an encoder or GL error later.
///
/// The largest picture: at most `maxSide` each way, and at most `Limit.video` pixels for a movie
/// (in and out) or `Limit.picture` for a picture output (PNG, JPEG; `preview`). The limits bound a
/// run's memory, which grows with the picture: the frames queued between stages, the encoder's
/// lookahead and references (x264 at its default speed keeps about 40 frames ahead). Measured on
/// llvmpipe (peak RSS, 60 frames, default settings): 2.0 GB at 4096x2176, 7.2 GB at 8192x4352 (so
/// 16384x12288 went far past 6 GB); an 8192x8192 picture 1.2 GB (docs/presets.md, "Limits").
public enum PictureSize {
    /// The widest or tallest picture: libx264 refuses anything larger ("invalid width x height"),
    /// and it is llvmpipe's GL_MAX_TEXTURE_SIZE. A GPU with smaller textures is checked against
    /// its own limit when the renderer is made (`ChainRenderer.checkSize`), still before any frame.
    public static let maxSide = 16384

    /// The most pixels a picture may have, and how to say it.
    public struct Limit: Sendable {
        public let pixels: Int
        public let text: String

        /// Movies: 4096x2176, the largest picture of HEVC's and AV1's level 5 (the 4K levels players
        /// decode; DCI 4K and UHD fit; H.264's level 5.2 allows 4096x2304).
        public static let video = Limit(pixels: 8_912_896, text: "8912896 pixels (4096x2176)")
        /// Pictures (PNG, JPEG): 8192x8192, 64 megapixels, which holds a 61-megapixel camera's photo;
        /// a picture keeps no frames queued and no encoder lookahead.
        public static let picture = Limit(pixels: 67_108_864, text: "67108864 pixels (8192x8192)")
    }

    /// The limits in words, for errors.
    static func limitText(_ limit: Limit) -> String {
        "at most \(maxSide) pixels wide or tall and \(limit.text) in all"
    }

    /// Whether a picture of this size is within both limits.
    public static func fits(_ width: Int, _ height: Int, _ limit: Limit) -> Bool {
        width <= maxSide && height <= maxSide && width * height <= limit.pixels
    }

    /// Refuses (exit 66) a picture that is empty once cropped to even sizes for 4:2:0 (1x1, 1xN),
    /// or larger than the limits; and (exit 67) a preset that makes it larger than that.
    /// `preset`: the preset's file, named when the preset is at fault.
    public static func check(_ g: RenderGeometry, input: String, preset: String? = nil, limit: Limit = .video) throws {
        let (w, h) = (g.sourceWidth, g.sourceHeight)
        if !fits(w, h, limit) {
            throw GPUEncodeError(.input, path: input, "video is \(w)x\(h); gpuencode handles \(limit.pixels == Limit.video.pixels ? "movies" : "pictures") \(limitText(limit))")
        }
        if g.uprightWidth < 2 || g.uprightHeight < 2 {
            throw GPUEncodeError(.input, path: input, "video is \(w)x\(h), too small: 4:2:0 H.264 needs at least 2x2 pixels")
        }
        // A geometry filter (scale, pad) can make the picture larger than the encoder takes.
        if !fits(g.outputWidth, g.outputHeight, limit) {
            throw GPUEncodeError(.preset, path: preset, "the preset makes the \(w)x\(h) video \(g.outputWidth)x\(g.outputHeight); gpuencode makes \(limit.pixels == Limit.video.pixels ? "movies" : "pictures") \(limitText(limit))")
        }
    }

    /// Refuses (exit 64) the size `--width` and its kin ask for when it is beyond the limits.
    /// `displayed`: the picture's size before scaling.
    public static func checkScaled(_ target: (width: Int, height: Int), from displayed: (width: Int, height: Int), input: String,
                                   limit: Limit = .video) throws {
        guard !fits(target.width, target.height, limit) else { return }
        throw GPUEncodeError(.usage, path: input, "the size asked for makes this \(displayed.width)x\(displayed.height) picture \(target.width)x\(target.height) (aspect kept); gpuencode makes \(limit.pixels == Limit.video.pixels ? "movies" : "pictures") \(limitText(limit))")
    }
}
