import CEGL
import Glibc

// Reading 10-bit outputs back (kept HDR, `FrameRenderer.writerOutputGLSL`): RGBA16UI targets of 10-bit
// codes, read as GL_RGBA_INTEGER/GL_UNSIGNED_SHORT (the implementation's read format for them on
// Mesa and NVIDIA; checked when the renderer is made), into the 16-bit little-endian planes of a
// yuv420p10le frame. The 8-bit readbacks (ShaderProgram.swift) are not involved.

/// Where the rows of one 10-bit target go: a target row y fills plane row y (`stride` bytes apart).
enum TenBitRows: @unchecked Sendable {
    /// Four samples a texel, `count` of them a row (the packed Y targets).
    case samples(UnsafeMutableRawPointer, stride: Int, count: Int)
    /// Texels of Cb, Cr, Cb, Cr (the NV12 block's chroma), split into two planes of `count` samples a row.
    case interleaved(cb: UnsafeMutableRawPointer, cr: UnsafeMutableRawPointer, stride: Int, count: Int)
    /// One sample a texel, in its first channel (the per-plane passes).
    case first(UnsafeMutableRawPointer, stride: Int, count: Int)

    /// Writes target row `y` (`src`: its texels, four 16-bit values each).
    func write(row y: Int, from src: UnsafePointer<UInt16>) {
        switch self {
        case let .samples(plane, stride, count):
            (plane + y * stride).copyMemory(from: src, byteCount: 2 * count)
        case let .interleaved(cb, cr, stride, count):
            let u = (cb + y * stride).assumingMemoryBound(to: UInt16.self)
            let v = (cr + y * stride).assumingMemoryBound(to: UInt16.self)
            for i in 0..<count {
                u[i] = src[2 * i]
                v[i] = src[2 * i + 1]
            }
        case let .first(plane, stride, count):
            let p = (plane + y * stride).assumingMemoryBound(to: UInt16.self)
            for i in 0..<count { p[i] = src[4 * i] }
        }
    }
}

extension RenderTarget {
    /// Whether glReadPixels reads this (RGBA16UI) target as GL_RGBA_INTEGER/GL_UNSIGNED_SHORT. GLES
    /// 3.0 promises only GL_UNSIGNED_INT for integer targets; the second pair is the driver's.
    var readsShorts: Bool {
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), fbo)
        glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        var format: GLint = 0, type: GLint = 0
        glGetIntegerv(GLenum(GL_IMPLEMENTATION_COLOR_READ_FORMAT), &format)
        glGetIntegerv(GLenum(GL_IMPLEMENTATION_COLOR_READ_TYPE), &type)
        return format == GL_RGBA_INTEGER && type == GL_UNSIGNED_SHORT
    }

    /// Reads attachment `index` (RGBA16UI, 10-bit codes) into `rows`, waiting for it.
    func readTenBit(_ index: Int, into rows: TenBitRows, scratch: inout [UInt16]) {
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), fbo)
        glReadBuffer(GLenum(Int(GL_COLOR_ATTACHMENT0) + index))
        let count = width * height * 4
        if scratch.count < count { scratch = [UInt16](repeating: 0, count: count) }
        scratch.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA_INTEGER), GLenum(GL_UNSIGNED_SHORT), base)
            for y in 0..<height { rows.write(row: y, from: base + y * width * 4) }
        }
    }
}

extension TransferBuffers {
    /// Waits for the buffers of `reads` (queued by `startRead(tenBit: true)`) and adds the writes of
    /// their rows to `plan`. Returns the buffers to hand back (`unmapReads`) once the plan has run.
    func stageTenBitReads(_ reads: [(index: Int, rows: TenBitRows)], target: RenderTarget, into plan: inout CopyPlan) -> [Int] {
        let texelRow = target.width * 4
        let sources = mapReads(reads.map(\.index), size: texelRow * 2 * target.height).map { $0.assumingMemoryBound(to: UInt16.self) }
        for (read, source) in zip(reads, sources) {
            plan.add(rows: target.height) { y in read.rows.write(row: y, from: source + y * texelRow) }
        }
        return reads.prefix(sources.count).map(\.index)
    }
}
