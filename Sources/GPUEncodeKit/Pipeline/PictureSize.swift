/// The picture sizes gpuencode carries from the decoder to the encoder, checked as soon as the
/// decoder knows them: before the encoder opens and before any frame is encoded, so a picture that
/// cannot be made fails with one clear line instead of an encoder or GL error later.
public enum PictureSize {
    /// The widest or tallest picture: libx264 refuses anything larger ("invalid width x height"),
    /// and it is llvmpipe's GL_MAX_TEXTURE_SIZE. A GPU with smaller textures is checked against
    /// its own limit when the renderer is made (`ChainRenderer.checkSize`), still before any frame.
    public static let maxSide = 16384

    /// Refuses (exit 66) a picture that is empty once cropped to even sizes for 4:2:0 (1x1, 1xN),
    /// or wider or taller than `maxSide`; and (exit 67) a preset that makes it larger than that.
    /// `preset`: the preset's file, named when the preset is at fault.
    public static func check(_ g: RenderGeometry, input: String, preset: String? = nil) throws {
        let (w, h) = (g.sourceWidth, g.sourceHeight)
        if w > maxSide || h > maxSide {
            throw GPUEncodeError(.input, path: input, "video is \(w)x\(h); gpuencode handles pictures up to \(maxSide) pixels wide and tall")
        }
        if g.uprightWidth < 2 || g.uprightHeight < 2 {
            throw GPUEncodeError(.input, path: input, "video is \(w)x\(h), too small: 4:2:0 H.264 needs at least 2x2 pixels")
        }
        // A geometry filter (scale, pad) can make the picture larger than the encoder takes.
        if g.outputWidth > maxSide || g.outputHeight > maxSide {
            throw GPUEncodeError(.preset, path: preset, "the preset makes the \(w)x\(h) video \(g.outputWidth)x\(g.outputHeight); gpuencode handles pictures up to \(maxSide) pixels wide and tall")
        }
    }
}
