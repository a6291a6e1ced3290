import CFFmpeg
import GPUEncodeCore
import GPUEncodeSettings

/// Output frames whose memory comes from a pool. A fresh 3 MB buffer per 1080p frame is a fresh
/// mmap, and writing it faults in and zeroes every page: measurable on the GPU thread at
/// hundreds of frames per second. Pooled buffers return when the encoder drops its last
/// reference, so a run reuses a handful of them.
package final class FramePool {
    package let width: Int32
    package let height: Int32
    package let format: AVPixelFormat
    private var pool: OpaquePointer?
    private var linesizes: [Int32] = [0, 0, 0, 0]
    private var offsets: [Int] = [0, 0, 0, 0]
    private let planeCount: Int

    package init(width: Int32, height: Int32, format: AVPixelFormat) throws {
        self.width = width
        self.height = height
        self.format = format
        try check(av_image_fill_linesizes(&linesizes, format, width), .internal, path: nil, "frame layout")
        // 64-byte rows suit SIMD in the encoder and the threaded copies.
        linesizes = linesizes.map { ($0 + 63) & ~63 }
        var sizes = [Int](repeating: 0, count: 4)
        let strides = linesizes.map { Int($0) }
        try check(av_image_fill_plane_sizes(&sizes, format, height, strides), .internal, path: nil, "frame layout")
        planeCount = sizes.filter { $0 > 0 }.count
        var total = 0
        for i in 0..<4 {
            offsets[i] = total
            total += (sizes[i] + 63) & ~63
        }
        guard let p = av_buffer_pool_init(total + 64, nil) else { throw GPUEncodeError(.internal, "out of memory") }
        pool = p
    }

    deinit {
        av_buffer_pool_uninit(&pool)
    }

    /// A frame of the pool's size and format; its buffer returns to the pool when the frame goes.
    package func frame() throws -> Frame {
        guard let buffer = av_buffer_pool_get(pool) else { throw GPUEncodeError(.internal, "out of memory") }
        let frame = Frame()
        let f = frame.pointer
        f.pointee.width = width
        f.pointee.height = height
        f.pointee.format = format.rawValue
        f.pointee.buf.0 = buffer
        let base = buffer.pointee.data!
        let present = (0..<4).map { $0 < planeCount }
        f.pointee.data.0 = base + offsets[0]
        f.pointee.data.1 = present[1] ? base + offsets[1] : nil
        f.pointee.data.2 = present[2] ? base + offsets[2] : nil
        f.pointee.linesize.0 = linesizes[0]
        f.pointee.linesize.1 = present[1] ? linesizes[1] : 0
        f.pointee.linesize.2 = present[2] ? linesizes[2] : 0
        f.pointee.extended_data = withUnsafeMutablePointer(to: &f.pointee.data.0) { $0 }
        return frame
    }
}
