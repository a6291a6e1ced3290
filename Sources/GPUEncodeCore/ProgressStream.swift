import CSystemShim
import Glibc

/// Where `--progress-url` (ffmpeg's `-progress`) writes its blocks: `pipe:1` (stdout), `pipe:2`
/// (stderr), or a file. The file is something we write, so it gets an output's care: a symbolic
/// link is never followed (one planted in a shared folder would redirect the writes), a FIFO or a
/// character device (/dev/null, a terminal) is written as it is, a new name becomes a new regular
/// file, and an existing regular file is replaced only with -y.
public final class ProgressStream: @unchecked Sendable {
    public let url: String
    private let fd: Int32
    private let owned: Bool
    private var failed = false

    /// The standard stream `url` names (1 or 2), or nil for a file. `-` and `pipe:` are stdout, as in ffmpeg.
    public static func standardStream(_ url: String) -> Int32? {
        switch url {
        case "pipe:1", "pipe:", "-": return 1
        case "pipe:2": return 2
        default: return nil
        }
    }

    /// Opens `url` for writing. Errors are 73 (cannot create output), one line naming the file.
    /// A FIFO blocks here until its reader opens it, as ffmpeg's does; SIGINT/SIGTERM stop that.
    public init(url: String, overwrite: Bool) throws {
        self.url = url
        guard let found = try Self.check(url: url, overwrite: overwrite) else {
            fd = Self.standardStream(url)!
            owned = false
            return
        }
        let (exists, kind) = found
        var rc: Int32
        repeat {
            // O_NOFOLLOW in every case: a symlink put in place between lstat and open fails with ELOOP.
            rc = gpuencode_open_for_writing(url, exists ? 0 : 1, exists && kind == S_IFREG ? 1 : 0)
        } while rc == -EINTR && gpuencode_interrupt_signal() == 0
        if rc == -EINTR { throw GPUEncodeError(.interrupted(signal: gpuencode_interrupt_signal()), path: url, "interrupted while opening the progress file") }
        if rc == -ELOOP {
            throw GPUEncodeError(.outputCreate, path: url, "is a symbolic link, which the progress file does not follow (give its target, or pipe:1 / pipe:2 for stdout / stderr)")
        }
        if rc == -EEXIST { throw GPUEncodeError(.outputCreate, path: url, "appeared while opening it (use -y to overwrite)") }
        guard rc >= 0 else { throw GPUEncodeError(.outputCreate, path: url, "cannot write the progress file: \(errnoString(-rc))") }
        fd = rc
        owned = true
    }

    /// What opening `url` checks before it opens: the name, a symbolic link, a folder, an existing
    /// file without -y (`probe` adds the open itself). Nil for a standard stream; else whether the
    /// name exists and its kind.
    @discardableResult
    public static func check(url: String, overwrite: Bool) throws -> (exists: Bool, kind: mode_t)? {
        if standardStream(url) != nil { return nil }
        if url.hasPrefix("pipe:") {
            throw GPUEncodeError(.usage, path: url, "the progress stream goes to pipe:1 (stdout), pipe:2 (stderr) or a file")
        }
        if url.isEmpty { throw GPUEncodeError(.usage, "--progress-url needs a file name, pipe:1 or pipe:2") }
        var st = stat()
        let exists = lstat(url, &st) == 0
        let kind = st.st_mode & S_IFMT
        if exists {
            switch kind {
            case S_IFLNK:
                throw GPUEncodeError(.outputCreate, path: url, "is a symbolic link, which the progress file does not follow (give its target, or pipe:1 / pipe:2 for stdout / stderr)")
            case S_IFDIR:
                throw GPUEncodeError(.outputCreate, path: url, "is a directory")
            case S_IFREG where !overwrite:
                throw GPUEncodeError(.outputCreate, path: url, "already exists (use -y to overwrite)")
            case S_IFREG, S_IFIFO, S_IFCHR:
                break
            default:
                throw GPUEncodeError(.outputCreate, path: url, "\(SafeFile.describe(mode: st.st_mode)), not a file, FIFO or character device")
            }
        }
        return (exists, kind)
    }

    /// What opening `url` would meet, leaving nothing behind: `--dry-run`. The checks of `check`,
    /// then the open itself where it cannot block or change anything: a new name is created and
    /// removed again, an existing file is opened without truncating it; a FIFO or device is not
    /// opened (a FIFO blocks until its reader comes).
    public static func probe(url: String, overwrite: Bool) throws {
        guard let found = try check(url: url, overwrite: overwrite), !found.exists || found.kind == S_IFREG else { return }
        let exists = found.exists
        let rc = gpuencode_open_for_writing(url, exists ? 0 : 1, 0)
        if rc == -ELOOP {
            throw GPUEncodeError(.outputCreate, path: url, "is a symbolic link, which the progress file does not follow (give its target, or pipe:1 / pipe:2 for stdout / stderr)")
        }
        if rc == -EEXIST { throw GPUEncodeError(.outputCreate, path: url, "appeared while opening it (use -y to overwrite)") }
        guard rc >= 0 else { throw GPUEncodeError(.outputCreate, path: url, "cannot write the progress file: \(errnoString(-rc))") }
        var made = stat(), named = stat()
        fstat(rc, &made)
        close(rc)
        // Only the file this probe created, still under its name, is removed.
        if !exists, lstat(url, &named) == 0, named.st_dev == made.st_dev, named.st_ino == made.st_ino { unlink(url) }
    }

    deinit { if owned { close(fd) } }

    /// Whether it writes to stdout (which then cannot carry anything else).
    public var isStdout: Bool { fd == 1 && !owned }
    public var isStderr: Bool { fd == 2 && !owned }

    /// Writes one block whole. After a write error the stream is given up (the transcode goes on;
    /// a closed pipe is SIGPIPE, which stops the run as it stops ffmpeg).
    package func write(_ text: String) {
        guard !failed else { return }
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                failed = true
                return
            }
            offset += n
        }
    }

    /// True when a write failed (the caller warns once at the end).
    public var hadWriteError: Bool { failed }
}
