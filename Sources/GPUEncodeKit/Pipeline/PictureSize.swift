/// The picture sizes gpuencode carries from the decoder to the encoder, checked as soon as the
/// decoder knows them: before the encoder opens and before any frame is encoded, so a picture that
/// cannot be made fails with one clear line instead of an encoder or GL error later.
///
/// The largest picture, in and out, video or still: at most `maxSide` each way and `maxPixels` in
/// all. `maxPixels` is 8192x4352, the largest picture of the highest levels of H.264 (6.2), HEVC
/// (6.2) and AV1 (6.3), so whatever is written a player of that level plays; and it bounds a run's
/// memory, which grows with the picture (frames queued between stages, the encoder's lookahead and
/// references): a 16384x12288 run went past 6 GB.
public enum PictureSize {
    /// The widest or tallest picture: libx264 refuses anything larger ("invalid width x height"),
    /// and it is llvmpipe's GL_MAX_TEXTURE_SIZE. A GPU with smaller textures is checked against
    /// its own limit when the renderer is made (`ChainRenderer.checkSize`), still before any frame.
    public static let maxSide = 16384
    /// The most pixels a picture may have: 8192 x 4352.
    public static let maxPixels = 35_651_584

    /// The limit in words, for errors, --help and the docs.
    public static let limitText = "at most \(maxSide) pixels wide or tall and \(maxPixels) pixels in all (8192x4352, 35.7 megapixels)"

    /// Whether a picture of this size is within both limits.
    public static func fits(_ width: Int, _ height: Int) -> Bool {
        width <= maxSide && height <= maxSide && width * height <= maxPixels
    }

    /// Refuses (exit 66) a picture that is empty once cropped to even sizes for 4:2:0 (1x1, 1xN),
    /// or larger than the limits; and (exit 67) a preset that makes it larger than that.
    /// `preset`: the preset's file, named when the preset is at fault.
    public static func check(_ g: RenderGeometry, input: String, preset: String? = nil) throws {
        let (w, h) = (g.sourceWidth, g.sourceHeight)
        if !fits(w, h) {
            throw GPUEncodeError(.input, path: input, "video is \(w)x\(h); gpuencode handles pictures \(limitText)")
        }
        if g.uprightWidth < 2 || g.uprightHeight < 2 {
            throw GPUEncodeError(.input, path: input, "video is \(w)x\(h), too small: 4:2:0 H.264 needs at least 2x2 pixels")
        }
        // A geometry filter (scale, pad) can make the picture larger than the encoder takes.
        if !fits(g.outputWidth, g.outputHeight) {
            throw GPUEncodeError(.preset, path: preset, "the preset makes the \(w)x\(h) video \(g.outputWidth)x\(g.outputHeight); gpuencode handles pictures \(limitText)")
        }
    }

    /// Refuses (exit 64) the size `--width` and its kin ask for when it is beyond the limits.
    /// `displayed`: the picture's size before scaling.
    public static func checkScaled(_ target: (width: Int, height: Int), from displayed: (width: Int, height: Int), input: String) throws {
        guard !fits(target.width, target.height) else { return }
        throw GPUEncodeError(.usage, path: input, "the size asked for makes this \(displayed.width)x\(displayed.height) picture \(target.width)x\(target.height) (aspect kept); gpuencode makes pictures \(limitText)")
    }
}
