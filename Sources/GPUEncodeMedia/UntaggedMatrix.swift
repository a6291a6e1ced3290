import CFFmpeg
import GPUEncodeCore

/// The Y'CbCr matrix of a stream whose tags do not name one, guessed from the picture's size as
/// players guess it: BT.709 when it is at least 1280 wide or more than 576 tall (HD), else BT.601
/// (SD). why: mpv, libplacebo (`pl_color_system_guess_ycbcr`) and browsers show untagged video so;
/// reading an untagged HD clip as BT.601 made the output's colours shift against what the same
/// clip looks like in them (and the output is tagged BT.709, so players show the shift).
package enum UntaggedMatrix {
    /// Whether `colorspace` leaves the matrix to be guessed.
    package static func isUntagged(_ colorspace: AVColorSpace) -> Bool {
        colorspace == AVCOL_SPC_UNSPECIFIED || colorspace == AVCOL_SPC_RESERVED
    }

    /// The guess for a `width` x `height` picture (coded size, before any rotation).
    package static func guess(width: Int, height: Int) -> YUVMatrix {
        isHD(width: width, height: height) ? .bt709 : .bt601
    }

    /// What `-v` says of the guess: nil for a tagged stream, and for RGB, palette and grey frames
    /// (swscale makes those BT.601 Y'CbCr itself, so nothing is guessed).
    package static func note(_ colorspace: AVColorSpace, format: AVPixelFormat, width: Int, height: Int) -> String? {
        guard isUntagged(colorspace), let desc = av_pix_fmt_desc_get(format)?.pointee,
              desc.flags & UInt64(AV_PIX_FMT_FLAG_RGB) == 0, desc.flags & UInt64(AV_PIX_FMT_FLAG_PAL) == 0, desc.nb_components >= 3
        else { return nil }
        let matrix = guess(width: width, height: height)
        return "guessed \(matrix.rawValue) (untagged, \(isHD(width: width, height: height) ? "HD" : "SD") by size)"
    }

    private static func isHD(width: Int, height: Int) -> Bool { width >= 1280 || height > 576 }
}
