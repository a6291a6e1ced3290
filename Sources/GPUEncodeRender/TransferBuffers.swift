import CEGL
import Dispatch
import Glibc

/// Pixel buffer objects, so uploads and readbacks go through driver-owned memory by DMA. All
/// readbacks of a frame are queued before the first is mapped, so the GPU transfers them in one
/// go instead of one synchronous round trip each.
///
/// Two ways to give the CPU the buffers' memory (`TransferOptions.Mapping`):
/// - `.perTransfer`: each transfer re-specifies the buffer (the driver hands out fresh memory) and
///   maps and unmaps it; the driver tracks when the GPU is done with it.
/// - `.persistent` (GL_EXT_buffer_storage): storage made once and mapped once for good; a fence after
///   each transfer says when the GPU is done with it, and uploads alternate between two banks so
///   the CPU fills one while the GPU copies the other. No map, unmap or allocation per frame.
final class TransferBuffers {
    /// Threads for the copies into and out of mapped buffers (`TransferOptions.copyThreads`).
    let copyThreads: Int
    /// Whether buffers are mapped once for good (see the type's comment).
    let persistent: Bool
    private var buffers: [GLuint]
    /// Persistent buffers: each one's storage size and its mapping for good.
    private var sizes: [Int]
    private var pointers: [UnsafeMutableRawPointer?]
    /// Persistent buffers: the fence after the GPU's last use of each one.
    private var fences: [GLsync?]
    /// Buffers `0..<count` are addressed by callers; persistent uploads alternate between those
    /// and a second bank of `count` more.
    private let count: Int
    private var uploadBank = 0
    private let bufferStorage: PFNGLBUFFERSTORAGEEXTPROC?

    init(count: Int, copyThreads: Int? = nil, mapping: TransferOptions.Mapping = .perTransfer) {
        self.copyThreads = ParallelCopy.workers(copyThreads)
        self.count = count
        let storage = mapping != .perTransfer ? TransferBuffers.bufferStorageEntry() : nil
        bufferStorage = storage
        persistent = storage != nil
        let total = persistent ? 2 * count : count
        buffers = [GLuint](repeating: 0, count: total)
        sizes = [Int](repeating: 0, count: total)
        pointers = [UnsafeMutableRawPointer?](repeating: nil, count: total)
        fences = [GLsync?](repeating: nil, count: total)
        glGenBuffers(GLsizei(total), &buffers)
    }

    deinit {
        for fence in fences { if let fence { glDeleteSync(fence) } }
        // Deleting a mapped buffer unmaps it.
        glDeleteBuffers(GLsizei(buffers.count), buffers)
    }

    /// glBufferStorageEXT when the context lists GL_EXT_buffer_storage (NVIDIA's does; Mesa's
    /// llvmpipe does too), else nil and the buffers are mapped per transfer.
    private static func bufferStorageEntry() -> PFNGLBUFFERSTORAGEEXTPROC? {
        guard GLContext.hasExtension("GL_EXT_buffer_storage"), let entry = eglGetProcAddress("glBufferStorageEXT") else { return nil }
        return unsafeBitCast(entry, to: PFNGLBUFFERSTORAGEEXTPROC.self)
    }

    /// Uploads planes packed four samples per texel (of one or two bytes), plane i into `textures[i]` through buffer i:
    /// all buffers are mapped first so one parallel copy covers every row of every plane (one
    /// thread dispatch per frame rather than one per plane).
    func upload(textures: [Texture], planes: [(data: UnsafeRawPointer, stride: Int)]) {
        var plan = CopyPlan()
        let staged = stageUpload(textures: textures, planes: planes, into: &plan)
        plan.run(workers: copyThreads)
        commitUpload(staged)
    }

    /// An upload whose rows are copied by a `CopyPlan`; `commitUpload` issues its GL calls once that has run.
    struct StagedUpload {
        fileprivate let base: Int
        fileprivate let textures: [Texture]
    }

    /// The first half of `upload`: maps the buffers (waiting for the GPU's last copy out of them)
    /// and adds the planes' rows to `plan`.
    func stageUpload(textures: [Texture], planes: [(data: UnsafeRawPointer, stride: Int)], into plan: inout CopyPlan) -> StagedUpload {
        let base = persistent ? uploadBank * count : 0
        uploadBank ^= 1
        var mapped: [Texture] = []
        for (i, texture) in textures.enumerated() {
            let rowBytes = texture.width * texture.bytesPerTexel
            guard let m = writable(base + i, size: rowBytes * texture.height) else { break }
            plan.add(rows: texture.height, rowBytes: min(planes[i].stride, rowBytes),
                     from: planes[i].data, stride: planes[i].stride, to: m, stride: rowBytes)
            mapped.append(texture)
        }
        return StagedUpload(base: base, textures: mapped)
    }

    /// The second half of `upload`, after the plan ran: the textures are copied from the buffers.
    func commitUpload(_ staged: StagedUpload) {
        for (i, texture) in staged.textures.enumerated() {
            glBindBuffer(GLenum(GL_PIXEL_UNPACK_BUFFER), buffers[staged.base + i])
            if !persistent { glUnmapBuffer(GLenum(GL_PIXEL_UNPACK_BUFFER)) }
            glActiveTexture(GLenum(Int(GL_TEXTURE0) + i))
            glBindTexture(GLenum(GL_TEXTURE_2D), texture.id)
            glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(texture.width), GLsizei(texture.height),
                            texture.clientFormat, texture.clientType, nil)
            if persistent { fence(staged.base + i) }
        }
        glBindBuffer(GLenum(GL_PIXEL_UNPACK_BUFFER), 0)
    }

    /// Queues a read of attachment `attachment` of `target` into buffer `index`: RGBA8, or with
    /// `tenBit` RGBA16UI (kept HDR's 10-bit codes, read as unsigned shorts).
    func startRead(_ index: Int, target: RenderTarget, attachment: Int, tenBit: Bool = false) {
        let (format, type, texelBytes) = tenBit ? (GL_RGBA_INTEGER, GL_UNSIGNED_SHORT, 8) : (GL_RGBA, GL_UNSIGNED_BYTE, 4)
        let size = target.width * target.height * texelBytes
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), target.fbo)
        glReadBuffer(GLenum(Int(GL_COLOR_ATTACHMENT0) + attachment))
        if persistent {
            // A read buffer is queued again only after `readable` waited for its last read.
            store(index, size: size, target: GLenum(GL_PIXEL_PACK_BUFFER), write: false)
        } else {
            glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), buffers[index])
            glBufferData(GLenum(GL_PIXEL_PACK_BUFFER), GLsizeiptr(size), nil, GLenum(GL_STREAM_READ))
        }
        glReadPixels(0, 0, GLsizei(target.width), GLsizei(target.height), GLenum(format), GLenum(type), nil)
        if persistent { fence(index) }
        glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0)
    }

    /// Binds buffer `index` as the shader storage (binding 0) a compute pass writes `size` bytes into:
    /// the frame goes from the shader to the mapped memory with no readback copy.
    func bindForShaderWrite(_ index: Int, size: Int) {
        let target = GLenum(GL_SHADER_STORAGE_BUFFER)
        if persistent {
            store(index, size: size, target: target, write: false)
        } else {
            glBindBuffer(target, buffers[index])
            glBufferData(target, GLsizeiptr(size), nil, GLenum(GL_STREAM_READ))
        }
        glBindBufferBase(target, 0, buffers[index])
    }

    /// After the dispatch that wrote buffer `index`: its writes made visible to the mapping, and fenced.
    func endShaderWrite(_ index: Int) {
        glMemoryBarrier(GLbitfield(persistent ? GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT : GL_BUFFER_UPDATE_BARRIER_BIT))
        if persistent { fence(index) }
        glBindBufferBase(GLenum(GL_SHADER_STORAGE_BUFFER), 0, 0)
    }

    /// Waits for buffer `index` (written by a compute pass) and adds copies of its planes to `plan`:
    /// each plane's `rows` rows start at byte `offset` of the buffer, `sourceStride` apart, and
    /// `rowBytes` of each go to `plane`'s rows, `stride` apart. Returns the buffers to hand back
    /// (`unmapReads`) once the plan has run.
    func stageShaderRead(_ index: Int, size: Int, sourceStride: Int, rowBytes: Int,
                         planes: [(offset: Int, rows: Int, plane: UnsafeMutablePointer<UInt8>, stride: Int)],
                         into plan: inout CopyPlan) -> [Int] {
        guard let source = mapReads([index], size: size).first else { return [] }
        for p in planes {
            plan.add(rows: p.rows, rowBytes: rowBytes, from: source + p.offset, stride: sourceStride, to: p.plane, stride: p.stride)
        }
        return [index]
    }

    /// Waits for the buffers of `reads` (queued by `startRead`) and adds copies of `rowBytes` of
    /// each of `target`'s rows into the planes to `plan`. Returns the buffers to hand back
    /// (`unmapReads`) once the plan has run.
    func stageReads(_ reads: [(index: Int, plane: UnsafeMutablePointer<UInt8>, stride: Int)], target: RenderTarget, rowBytes: Int,
                    into plan: inout CopyPlan) -> [Int] {
        let texelRow = target.width * 4
        let sources = mapReads(reads.map(\.index), size: texelRow * target.height)
        for (read, source) in zip(reads, sources) {
            plan.add(rows: target.height, rowBytes: min(rowBytes, texelRow), from: source, stride: texelRow, to: read.plane, stride: read.stride)
        }
        return reads.prefix(sources.count).map(\.index)
    }

    /// Waits until the GPU has written buffers `indices` (`startRead`) and returns their bytes, in
    /// order; stops at the first that cannot be mapped.
    func mapReads(_ indices: [Int], size: Int) -> [UnsafeRawPointer] {
        var mapped: [UnsafeRawPointer] = []
        for i in indices {
            if persistent {
                waitFence(i)
                guard let p = pointers[i] else { break }
                mapped.append(UnsafeRawPointer(p))
            } else {
                glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), buffers[i])
                guard let m = glMapBufferRange(GLenum(GL_PIXEL_PACK_BUFFER), 0, GLsizeiptr(size), GLbitfield(GL_MAP_READ_BIT)) else { break }
                mapped.append(UnsafeRawPointer(m))
            }
        }
        return mapped
    }

    /// Whether the GPU is done with buffer `i` (its last fence passed), without waiting. Buffers
    /// mapped per transfer have no fences: true.
    func isDone(_ i: Int) -> Bool {
        guard let f = fences[i] else { return true }
        var status: GLint = 0
        glGetSynciv(f, GLenum(GL_SYNC_STATUS), 1, nil, &status)
        return status == GL_SIGNALED
    }

    /// Hands buffers `indices` back after `mapReads` (persistent ones stay mapped).
    func unmapReads(_ indices: [Int]) {
        guard !persistent else { return }
        for i in indices {
            glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), buffers[i])
            glUnmapBuffer(GLenum(GL_PIXEL_PACK_BUFFER))
        }
        glBindBuffer(GLenum(GL_PIXEL_PACK_BUFFER), 0)
    }

    /// Buffer `i` bound for unpacking and mapped for the CPU to fill with `size` bytes.
    private func writable(_ i: Int, size: Int) -> UnsafeMutableRawPointer? {
        if persistent {
            store(i, size: size, target: GLenum(GL_PIXEL_UNPACK_BUFFER), write: true)
            // The GPU copied this bank two frames ago; the wait is normally already over.
            waitFence(i)
            return pointers[i]
        }
        glBindBuffer(GLenum(GL_PIXEL_UNPACK_BUFFER), buffers[i])
        glBufferData(GLenum(GL_PIXEL_UNPACK_BUFFER), GLsizeiptr(size), nil, GLenum(GL_STREAM_DRAW))
        return glMapBufferRange(GLenum(GL_PIXEL_UNPACK_BUFFER), 0, GLsizeiptr(size),
                                GLbitfield(GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT))
    }

    /// Binds persistent buffer `i` to `target`, giving it storage of `size` bytes mapped for good
    /// the first time (or when the size changes: storage made this way cannot be resized).
    private func store(_ i: Int, size: Int, target: GLenum, write: Bool) {
        if sizes[i] != size {
            waitFence(i)
            glDeleteBuffers(1, &buffers[i])
            glGenBuffers(1, &buffers[i])
            glBindBuffer(target, buffers[i])
            let access = GLbitfield(write ? GL_MAP_WRITE_BIT : GL_MAP_READ_BIT) | GLbitfield(GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT)
            // Read buffers in the CPU's cached memory: the copies out of them read every byte.
            let storage = access | (write ? 0 : GLbitfield(GL_CLIENT_STORAGE_BIT_EXT))
            bufferStorage?(target, GLsizeiptr(size), nil, storage)
            pointers[i] = glMapBufferRange(target, 0, GLsizeiptr(size), access)
            sizes[i] = size
        }
        glBindBuffer(target, buffers[i])
    }

    private func fence(_ i: Int) {
        if let old = fences[i] { glDeleteSync(old) }
        fences[i] = glFenceSync(GLenum(GL_SYNC_GPU_COMMANDS_COMPLETE), 0)
    }

    /// Waits for the GPU to pass fence `i`. (Polling with short sleeps instead measured the same
    /// CPU time in a 16-job batch on the H100, 41-45 core-seconds either way: no spinning to save.)
    private func waitFence(_ i: Int) {
        guard let f = fences[i] else { return }
        _ = glClientWaitSync(f, GLbitfield(GL_SYNC_FLUSH_COMMANDS_BIT), GLuint64.max)
        glDeleteSync(f)
        fences[i] = nil
    }
}

/// Row copies into and out of mapped transfer buffers, gathered from several transfers and run as
/// one parallel pass: a frame's copy out of the read buffer and the next frame's copy into the upload
/// buffers cost one thread dispatch, not two. Each worker takes its share of every job's rows, so
/// the work is even however the jobs' rows differ in size.
struct CopyPlan {
    /// `rows` rows; `copy(y)` copies row y.
    private var jobs: [(rows: Int, copy: (Int) -> Void)] = []

    /// Adds `rows` rows whose row y `copy(y)` copies.
    mutating func add(rows: Int, _ copy: @escaping (Int) -> Void) {
        if rows > 0 { jobs.append((rows, copy)) }
    }

    /// Adds `rows` rows of `rowBytes` bytes each, from `source` (rows `sourceStride` apart) to
    /// `destination` (rows `destinationStride` apart).
    mutating func add(rows: Int, rowBytes: Int, from source: UnsafeRawPointer, stride sourceStride: Int,
                      to destination: UnsafeMutableRawPointer, stride destinationStride: Int) {
        add(rows: rows) { y in
            (destination + y * destinationStride).copyMemory(from: source + y * sourceStride, byteCount: rowBytes)
        }
    }

    /// Runs every job's copies on `workers` threads (on this one when there are only a few rows).
    func run(workers: Int) {
        let jobs = self.jobs
        let n = jobs.reduce(0) { $0 + $1.rows } < 64 ? 1 : workers
        func share(_ i: Int) {
            for job in jobs {
                for y in (job.rows * i / n)..<(job.rows * (i + 1) / n) { job.copy(y) }
            }
        }
        if n == 1 { share(0) } else { DispatchQueue.concurrentPerform(iterations: n, execute: share) }
    }
}

/// How many threads copy into and out of mapped transfer buffers (`CopyPlan`). One thread copies
/// about 10 GB/s, which caps a 1080p frame (3 MB each way) near 1000 fps on a fast GPU; machines
/// with many cores have the memory bandwidth for several. `TransferOptions.copyThreads` overrides.
/// (On the 16-core H100 machine, 8 threads rather than 4 took the 1080p filter stage from about
/// 1840 to 2180 fps, and 16 rather than 8 from 3358 to 3855 (2160p 1404 to 1835); the copies, not
/// the GPU, bound one process there. Whole transcodes took the same time with 8 or 16.)
enum ParallelCopy {
    /// `requested` (1...16) when given, else 16 on machines of 16 cores or more, 4 on 8 or more, 1 below.
    static func workers(_ requested: Int?) -> Int {
        if let v = requested, v >= 1 { return min(v, 16) }
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return cores >= 16 ? 16 : cores >= 8 ? 4 : 1
    }
}
