import CFFmpeg

/// The FFmpeg this process runs with: the libraries' own answers at run time, not the headers it
/// was built against, so `gpuencode --version` shows what the loader actually found.
public enum FFmpegVersion {
    /// FFmpeg's release string, e.g. "5.1.6-0+deb12u1".
    public static var release: String { String(cString: av_version_info()) }

    /// Each library with its version, e.g. ("libavcodec", "59.37.100").
    public static var libraries: [(name: String, version: String)] {
        [("libavformat", avformat_version()), ("libavcodec", avcodec_version()), ("libavutil", avutil_version()),
         ("libswscale", swscale_version()), ("libswresample", swresample_version())]
            .map { ($0.0, "\($0.1 >> 16).\(($0.1 >> 8) & 0xff).\($0.1 & 0xff)") }
    }
}
