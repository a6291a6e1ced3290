import CFFmpeg
import CShim

let AVERROR_EOF_VALUE = gpuencode_averror_eof()
let AVERROR_EAGAIN_VALUE = gpuencode_averror_eagain()
let AV_NOPTS = gpuencode_nopts_value()
let AV_TIME_BASE_Q_VALUE = AVRational(num: 1, den: AV_TIME_BASE)

func averrorString(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    gpuencode_err2str(code, &buffer, buffer.count)
    return String(cString: buffer)
}

/// Throws a GPUEncodeError of `kind` when an FFmpeg call returns a negative code.
@discardableResult
func check(_ code: Int32, _ kind: GPUEncodeError.Kind, path: String?, _ what: @autoclosure () -> String) throws -> Int32 {
    if code < 0 { throw GPUEncodeError(kind, path: path, "\(what()): \(averrorString(code))") }
    return code
}

func seconds(_ ts: Int64, _ tb: AVRational) -> Double {
    Double(ts) * av_q2d(tb)
}

/// Log levels the CLI maps -v and -q onto.
public enum MediaLog {
    public static func setLevel(verbose: Bool) {
        // FFmpeg's own lines would break the one-line error rule; -v shows its warnings.
        gpuencode_set_log_level(verbose ? AV_LOG_WARNING : AV_LOG_QUIET)
    }
}

/// The planes of a planar or semi-planar frame (3 for yuv420p, 2 for NV12).
func framePlanes(_ frame: UnsafeMutablePointer<AVFrame>) -> [Plane] {
    let f = frame.pointee
    let count = Int(av_pix_fmt_count_planes(AVPixelFormat(rawValue: f.format)))
    let data = [f.data.0, f.data.1, f.data.2]
    let strides = [f.linesize.0, f.linesize.1, f.linesize.2]
    return (0..<min(count, 3)).map { Plane(data: data[$0]!, stride: Int(strides[$0])) }
}
