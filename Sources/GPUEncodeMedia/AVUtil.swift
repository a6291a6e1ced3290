import CFFmpeg
import CShim
import Glibc
import GPUEncodeCore

package let AVERROR_EOF_VALUE = gpuencode_averror_eof()
package let AVERROR_EAGAIN_VALUE = gpuencode_averror_eagain()
package let AV_NOPTS = gpuencode_nopts_value()
package let AV_TIME_BASE_Q_VALUE = AVRational(num: 1, den: AV_TIME_BASE)
package let AVERROR_INVALIDDATA_VALUE: Int32 = {
    // FFERRTAG('I','N','D','A'), negated.
    let tag = Int32(UInt8(ascii: "I")) | Int32(UInt8(ascii: "N")) << 8 | Int32(UInt8(ascii: "D")) << 16 | Int32(UInt8(ascii: "A")) << 24
    return -tag
}()

package func averrorString(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    gpuencode_err2str(code, &buffer, buffer.count)
    return String(cString: buffer)
}

/// Throws a GPUEncodeError of `kind` when an FFmpeg call returns a negative code.
@discardableResult
package func check(_ code: Int32, _ kind: GPUEncodeError.Kind, path: String?, _ what: @autoclosure () -> String) throws -> Int32 {
    if code < 0 { throw GPUEncodeError(kind, path: path, "\(what()): \(averrorString(code))") }
    return code
}

package func seconds(_ ts: Int64, _ tb: AVRational) -> Double {
    Double(ts) * av_q2d(tb)
}

/// Log levels the CLI maps -v and -q onto.
public enum MediaLog {
    public static func setLevel(verbose: Bool) {
        // FFmpeg's own lines would break the one-line error rule; -v shows its warnings.
        gpuencode_set_log_level(verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
        // SVT-AV1 prints to stderr itself, at the level SVT_LOG names (read when an encoder is
        // made): warnings with -v, nothing otherwise. A value the user set is kept. Called before
        // any other thread starts, as setenv must be.
        setenv("SVT_LOG", verbose ? "2" : "0", 0)
    }
}
