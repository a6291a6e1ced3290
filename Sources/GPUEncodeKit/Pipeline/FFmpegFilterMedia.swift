/// The pictures and movies that the `image`, `lookup` and `video` filters read, decoded with
/// FFmpeg (ImageIO, OverlayDecoder). The filters layer has no FFmpeg, so a program installs this
/// once, before it loads presets:
///
///     FilterMedia.install(FFmpegFilterMedia())
public struct FFmpegFilterMedia: FilterMediaDecoding {
    public init() {}

    public func decodePicture(_ bytes: [UInt8], name: String) throws -> RGBAImage {
        try ImageIO.decode(bytes, name: name)
    }

    public func openMovie(path: String, loop: Bool, offset: Double) throws -> any DynamicSource {
        try OverlayDecoder(path: path, loop: loop, offset: offset)
    }
}
