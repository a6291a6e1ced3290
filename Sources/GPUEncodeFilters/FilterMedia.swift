import GPUEncodeCore

/// What the filters that read pictures and movies (`image`, `lookup`, `video`) need from a media
/// library. This layer links none: FFmpeg belongs to the pipeline layer, which implements this
/// (GPUEncodeKit's `FFmpegFilterMedia`), and the program installs it once, before loading presets:
///
///     FilterMedia.install(FFmpegFilterMedia())
///
/// It is reached from preset loading rather than passed to the renderer because those filters
/// decode their files when the preset loads, so that a missing or broken file is a preset error
/// with its line, and preset loading happens in the presets layer, which has no FFmpeg either.
public protocol FilterMediaDecoding: Sendable {
    /// A PNG or JPEG file's bytes as RGBA; `name` is for messages. Throws a `GPUEncodeError`.
    func decodePicture(_ bytes: [UInt8], name: String) throws -> RGBAImage
    /// The movie at `path` (its best video stream) as the `video` filter's frame source: at each
    /// output time the frame whose presentation interval contains it, less `offset` seconds;
    /// `loop` starts it again at its end, else it holds its last frame. Made when the preset loads
    /// (to check the file) and again on the rendering thread for each run. Throws a `GPUEncodeError`.
    func openMovie(path: String, loop: Bool, offset: Double) throws -> any DynamicSource
}

/// The `FilterMediaDecoding` the filters use, installed once by the program.
public enum FilterMedia {
    private static let installed = Locked<(any FilterMediaDecoding)?>(nil)

    /// Sets the decoder for every filter that reads a picture or a movie from now on.
    public static func install(_ media: any FilterMediaDecoding) {
        installed.withLock { $0 = media }
    }

    /// The installed decoder, if any.
    public static var current: (any FilterMediaDecoding)? { installed.withLock { $0 } }

    /// The installed decoder, or a `FilterError` saying that none was installed (`what`: the file).
    static func required(for what: String) throws -> any FilterMediaDecoding {
        guard let media = current else {
            throw FilterError("\(what): no picture and movie decoder is installed in this program (FilterMedia.install(FFmpegFilterMedia()) from GPUEncodeKit)")
        }
        return media
    }

    /// File name endings of the pictures `decodePicture` takes (the `image` filter's `file`).
    public static let pictureExtensions = ["png", "jpg", "jpeg"]
}
