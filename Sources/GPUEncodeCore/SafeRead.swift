import Glibc

/// Why a file could not be read, in words to show after its name.
package struct FileReadError: Error {
    package let reason: String
}

/// What a file is read as; each kind has a size cap (docs/presets.md, "Files a preset reads").
///
/// Every file gpuencode reads (presets, LUTs, images, curves, shaders, batch state, reports,
/// manifests) must be a regular file: a FIFO would block forever and a device such as /dev/zero
/// never ends. The caps bound memory and time for files that are big by mistake or on purpose;
/// they are far above what a real file of the kind needs:
///
/// | kind                         | cap     | why that much                                          |
/// |------------------------------|---------|--------------------------------------------------------|
/// | preset, manifest (JSON/CSV)  | 16 MiB  | the largest built-in preset is a few KiB               |
/// | shader (.frag, .glsl)        | 1 MiB   | GLSL sources are KiB; drivers choke long before        |
/// | .cube LUT                    | 1 GiB   | a 256³ table written with 9 digits a value is ~600 MB; |
/// |                              |         | it is parsed as it streams, so memory is the table's   |
/// | .acv tone curve              | 64 KiB  | a real one is under 200 bytes (4 curves, 19 points)    |
/// | image (PNG, JPEG)            | 256 MiB | a 16384² PNG of noise is about that; decoded pictures  |
/// |                              |         | are capped at 16384 x 16384 too (ImageIO)              |
/// | batch state, report (JSON)   | 256 MiB | about a million job records                            |
/// | media (hashing an input)     | none    | read in chunks, never held                             |
public enum ReadKind: Sendable {
    case preset, manifest, shader, cube, acv, image, state, report, media

    /// The most bytes a file of this kind may hold (nil: no cap).
    var limit: Int? {
        switch self {
        case .preset, .manifest: return 16 << 20
        case .shader: return 1 << 20
        case .cube: return 1 << 30
        case .acv: return 64 << 10
        case .image: return 256 << 20
        case .state, .report: return 256 << 20
        case .media: return nil
        }
    }

    var noun: String {
        switch self {
        case .preset: return "preset"
        case .manifest: return "manifest"
        case .shader: return "shader"
        case .cube: return ".cube file"
        case .acv: return ".acv file"
        case .image: return "image"
        case .state: return "state file"
        case .report: return "report"
        case .media: return "media file"
        }
    }
}

/// A regular file opened for reading: opened with O_NONBLOCK so that opening a FIFO cannot block,
/// checked with fstat on the descriptor (no race with a rename between a check and the open), then
/// switched back to blocking reads. Reads stop with an error past the kind's cap, also when the file
/// grows while it is read.
package final class SafeFile {
    let path: String
    let kind: ReadKind
    /// The size fstat reported at open.
    package let size: Int
    private let fd: Int32
    private var consumed = 0

    /// `canonical`: the path was checked after `realpath` (see AllowedPaths), so its last component
    /// is no symlink; O_NOFOLLOW keeps a symlink swapped in after the check from being followed.
    package init(_ path: String, kind: ReadKind, canonical: Bool = false) throws {
        self.path = path
        self.kind = kind
        var fd: Int32
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (canonical ? O_NOFOLLOW : 0)
        repeat { fd = open(path, flags) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw FileReadError(reason: errnoString()) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let reason = errnoString()
            close(fd)
            throw FileReadError(reason: reason)
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw FileReadError(reason: "\(SafeFile.describe(mode: st.st_mode)), not a regular file")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        self.fd = fd
        self.size = Int(st.st_size)
        if let limit = kind.limit, size > limit {
            close(fd)
            throw FileReadError(reason: "is \(SafeFile.bytes(size)), more than the \(SafeFile.bytes(limit)) a \(kind.noun) may have")
        }
    }

    deinit { close(fd) }

    package static func describe(mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "is a directory"
        case S_IFIFO: return "is a FIFO (named pipe)"
        case S_IFCHR: return "is a character device"
        case S_IFBLK: return "is a block device"
        case S_IFSOCK: return "is a socket"
        default: return "is not a plain file"
        }
    }

    static func bytes(_ n: Int) -> String {
        if n >= 1 << 30 && n % (1 << 30) == 0 { return "\(n >> 30) GiB" }
        if n >= 1 << 20 && n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
        if n >= 1 << 10 && n % (1 << 10) == 0 { return "\(n >> 10) KiB" }
        return "\(n) bytes"
    }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var n: Int
        repeat { n = Glibc.read(fd, base, buffer.count) } while n < 0 && errno == EINTR
        guard n >= 0 else { throw FileReadError(reason: errnoString()) }
        consumed += n
        if let limit = kind.limit, consumed > limit {
            throw FileReadError(reason: "grew past the \(SafeFile.bytes(limit)) a \(kind.noun) may have while being read")
        }
        return n
    }

    /// The whole file.
    func readAll() throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = try chunk.withUnsafeMutableBytes { try read(into: $0) }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Refuses at once what is not a regular file (a FIFO, a folder, a device), without blocking and
/// without reading: for a file that is opened later by something else (FFmpeg opens a movie by its
/// path, and opening a FIFO there blocks until a writer comes).
package func requireRegularFile(_ path: String, canonical: Bool = false) throws {
    _ = try SafeFile(path, kind: .media, canonical: canonical)
}

/// A regular file's bytes, within the kind's cap.
package func readFileSafely(_ path: String, kind: ReadKind, canonical: Bool = false) throws -> [UInt8] {
    try SafeFile(path, kind: kind, canonical: canonical).readAll()
}

/// A regular file's text (invalid UTF-8 becomes U+FFFD), within the kind's cap.
package func readTextFileSafely(_ path: String, kind: ReadKind, canonical: Bool = false) throws -> String {
    String(decoding: try readFileSafely(path, kind: kind, canonical: canonical), as: UTF8.self)
}
