import CSystemShim
import Glibc

/// A hidden temporary beside an output, created so that nothing at its name is ever followed or
/// reused: O_CREAT|O_EXCL|O_NOFOLLOW under a name nobody can predict. A symlink planted in a shared
/// folder (/tmp, a CI cache, a shared volume) therefore can neither redirect our writes nor become
/// the output. The name is short and does not grow with the output's (names near NAME_MAX work) and
/// carries our PID and a tag of our PID namespace and boot, so a later run can remove the
/// temporaries of killed processes (`removeStale`): `.gpuencode-PID-TAG-RANDOM.partial`, 55 bytes
/// at most.
///
/// The temporary is made, removed and renamed into place relative to its folder's descriptor
/// (ContainedDirectory), never by path: a folder on the path swapped for a link while the file is
/// written cannot split the temporary from its output or take either elsewhere.
package struct TemporaryFile {
    static let prefix = ".gpuencode-"
    static let suffix = ".partial"

    /// The folder the temporary and its output are in.
    package let directory: ContainedDirectory
    /// The temporary's name in `directory`.
    package let name: String
    package let fd: Int32
    /// The file we created, to make sure cleanup removes ours and not something put in its place.
    private let identity: (dev: UInt, ino: UInt)

    /// Where the temporary is, for messages (and a read through the name where /proc is missing).
    package var path: String { directory.path == "/" ? "/\(name)" : "\(directory.path)/\(name)" }

    /// Creates the temporary in the folder `dir` (opened once, following links in the path given);
    /// `target` is the output it stands for (for error messages).
    package init(in dir: String, for target: String) throws {
        let directory: ContainedDirectory
        do { directory = try ContainedDirectory(root: dir) } catch let e as GPUEncodeError {
            throw GPUEncodeError(.outputCreate, path: target, "cannot create a file in \(dir): \(e.message)")
        }
        try self.init(in: directory, for: target)
    }

    /// Creates the temporary in `directory`; `target` is the output it stands for (for error messages).
    package init(in directory: ContainedDirectory, for target: String) throws {
        var attempt = 0
        while true {
            // 64 random bits: a name that exists already is someone else's (or a trap); try another.
            let candidate = "\(TemporaryFile.prefix)\(getpid())-\(TemporaryFile.namespaceTag)-\(hex16(UInt64.random(in: .min ... .max)))\(TemporaryFile.suffix)"
            let rc = gpuencode_create_exclusive_at(directory.fd, candidate)
            if rc >= 0 {
                var st = stat()
                fstat(rc, &st)
                self.directory = directory
                name = candidate
                fd = rc
                identity = (UInt(st.st_dev), UInt(st.st_ino))
                return
            }
            attempt += 1
            if -rc != EEXIST || attempt >= 16 {
                throw GPUEncodeError(.outputCreate, path: target, "cannot create a file in \(directory.path): \(errnoString(-rc))")
            }
        }
    }

    /// Closes the descriptor; false (errno set) when the close reports a delayed write error.
    package func close() -> Bool { Glibc.close(fd) == 0 }

    /// Removes the temporary if the name still holds the file we created.
    package func remove() {
        var st = stat()
        guard fstatat(directory.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0,
              UInt(st.st_dev) == identity.dev, UInt(st.st_ino) == identity.ino else { return }
        unlinkat(directory.fd, name, 0)
    }

    /// Moves the finished temporary to `finalPath`, which names a file in the temporary's folder:
    /// only its last component is used, renamed to within the folder's descriptor. Without
    /// `overwrite`, a file that appeared at `finalPath` since the start (another gpuencode writing
    /// the same output) is never replaced: this run loses with 73 and removes its temporary. With
    /// `overwrite`, renameat(2) replaces it.
    package func commit(to finalPath: String, overwrite: Bool) throws {
        let finalName = splitPath(finalPath).base
        if overwrite {
            guard renameat(directory.fd, name, directory.fd, finalName) == 0 else {
                let reason = errnoString()
                remove()
                throw GPUEncodeError(.outputCreate, path: finalPath, "cannot move the finished file into place: \(reason)")
            }
            return
        }
        let rc = gpuencode_rename_noreplace_at(directory.fd, name, finalName)
        guard rc == 0 else {
            remove()
            if -rc == EEXIST {
                throw GPUEncodeError(.outputCreate, path: finalPath, "appeared while this run was writing it (another writer?); not replaced, nothing written (use -y to overwrite)")
            }
            throw GPUEncodeError(.outputCreate, path: finalPath, "cannot move the finished file into place: \(errnoString(-rc))")
        }
    }

    /// Removes the temporaries that killed runs (SIGKILL, the OOM killer, a power cut) left in `dir`:
    /// only names of our exact pattern, only regular files (never following a link), and only when
    /// the PID in the name is no longer a live process. PIDs mean something only within one PID
    /// namespace of one boot: a temporary whose tag is not ours (another container or machine on a
    /// shared volume, whose live writer we cannot see) is never touched. A PID reused by an
    /// unrelated process keeps its file until that process ends: safe, never wrong. `legacyBase`
    /// also removes the older `.NAME.PID.partial` of that one output, which has no tag: only when
    /// untouched for an hour as well (no live writer goes that long without writing).
    package static func removeStale(in directory: ContainedDirectory, legacyBase: String? = nil) {
        // A descriptor of its own (not dup: that would share the read position of every scan);
        // fdopendir takes it over, the folder keeps its own.
        let copy = gpuencode_open_directory_below(directory.fd, ".")
        guard copy >= 0 else { return }
        guard let d = fdopendir(copy) else {
            Glibc.close(copy)
            return
        }
        defer { closedir(d) }
        let fdDir = dirfd(d)
        let ours = namespaceTag
        while let entry = readdir(d) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let (pid, tag) = parseName(name, legacyBase: legacyBase), pid != getpid() else { continue }
            var st = stat()
            guard fstatat(fdDir, name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            if let tag {
                guard tag == ours else { continue }
            } else {
                guard Int(st.st_mtim.tv_sec) < Int(time(nil)) - 3600 else { continue }
            }
            guard kill(pid, 0) != 0 && errno == ESRCH else { continue }
            unlinkat(fdDir, name, 0)
        }
    }

    /// PID and namespace tag of a temporary's name when the name is exactly one of ours (tag nil
    /// for the legacy `.NAME.PID.partial` of `legacyBase`), else nil.
    static func parseName(_ name: String, legacyBase: String?) -> (pid: pid_t, tag: String?)? {
        func isLowerHex(_ s: Substring, count: Int) -> Bool {
            s.utf8.count == count && s.allSatisfy { $0.isHexDigit && !$0.isUppercase }
        }
        let digits: Substring
        var tag: String?
        if name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let core = name.dropFirst(prefix.count).dropLast(suffix.count)
            let parts = core.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, isLowerHex(parts[1], count: 8), isLowerHex(parts[2], count: 16) else { return nil }
            digits = parts[0]
            tag = String(parts[1])
        } else if let base = legacyBase, name.hasPrefix(".\(base).") && name.hasSuffix(suffix) {
            digits = name.dropFirst(base.count + 2).dropLast(suffix.count)
        } else {
            return nil
        }
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let value = Int32(digits), value > 0 else { return nil }
        return (value, tag)
    }

    /// 8 hex digits naming this boot (kernel boot_id), PID namespace (its inode) and host: PIDs
    /// are comparable only between temporaries with the same tag. Fixed for the process, so it is
    /// worked out once rather than for every temporary and every scan.
    static let namespaceTag: String = {
        var h = FNV1a64()
        var st = stat()
        if stat("/proc/self/ns/pid", &st) == 0 { h.update("pidns:\(st.st_dev):\(st.st_ino)\n") }
        let fd = Glibc.open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = Glibc.read(fd, &buffer, buffer.count)
            Glibc.close(fd)
            if n > 0 { h.update("boot:" + String(decoding: buffer[0..<n], as: UTF8.self)) }
        }
        var host = [CChar](repeating: 0, count: 256)
        if gethostname(&host, host.count - 1) == 0 { h.update("host:" + String(cString: host)) }
        return String(FNV1a64.hex(h.value).suffix(8))
    }()
}

private func hex16(_ v: UInt64) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 16 - s.count) + s
}

/// Writes a whole file through a hidden temporary beside it and a rename, so readers never see a
/// partial file; refuses to replace an existing one unless `overwrite`, including one that another
/// writer put there while we were writing (exit 73, nothing left behind). With `stopIfInterrupted`
/// (commands that install the SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ handlers and write one file),
/// a signal that arrived before the rename stops it: the temporary goes, nothing is written, and
/// the error carries 128+signal. State and reports pass false: they must be saved on interruption.
///
/// `removingStale`: first remove temporaries of dead runs from the folder. Outputs do; the batch's
/// state and report, saved after every job, do not (a folder scan per job would grow with the batch).
package func writeFileAtomically(_ bytes: [UInt8], to path: String, overwrite: Bool, stopIfInterrupted: Bool = false,
                         removingStale: Bool = true) throws {
    let (dir, _) = splitPath(path)
    guard isDirectory(dir) else { throw GPUEncodeError(.outputCreate, path: path, "directory \(dir) does not exist") }
    // The folder is opened once: the temporary and the rename happen in the folder checked here.
    let directory = try ContainedDirectory(root: dir)
    try writeFileAtomically(bytes, in: directory, to: path, overwrite: overwrite, stopIfInterrupted: stopIfInterrupted,
                            removingStale: removingStale)
}

/// `writeFileAtomically` into a folder already opened (walked from a root without following links:
/// ContainedDirectory); `path` names the file in it (its last component is the name written, the
/// whole is for messages). Nothing at the name is ever followed: the rename replaces it (with `overwrite`).
package func writeFileAtomically(_ bytes: [UInt8], in directory: ContainedDirectory, to path: String, overwrite: Bool,
                                 stopIfInterrupted: Bool = false, removingStale: Bool = true) throws {
    func checkSignal() throws {
        let sig = gpuencode_interrupt_signal()
        guard stopIfInterrupted, sig != 0 else { return }
        throw GPUEncodeError(.interrupted(signal: sig), path: path, "interrupted by \(signalName(sig)); nothing written")
    }
    try checkSignal()
    let name = splitPath(path).base
    if !overwrite && directory.fileType(name) != nil {
        throw GPUEncodeError(.outputCreate, path: path, "already exists (use -y to overwrite)")
    }
    if removingStale { TemporaryFile.removeStale(in: directory) }
    let temp = try TemporaryFile(in: directory, for: path)
    var offset = 0
    var failure: Int32 = 0
    bytes.withUnsafeBytes { raw in
        while offset < raw.count {
            let n = write(temp.fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                return
            }
            offset += n
        }
    }
    if !temp.close() && failure == 0 { failure = errno }
    guard failure == 0 else {
        temp.remove()
        throw GPUEncodeError(.encode, path: path, "writing failed: \(errnoString(failure))")
    }
    do { try checkSignal() } catch {
        temp.remove()
        throw error
    }
    try temp.commit(to: path, overwrite: overwrite)
}

/// "SIGTERM" for 15 etc., for messages about the signal that stopped a run.
public func signalName(_ sig: Int32) -> String {
    switch sig {
    case SIGINT: return "SIGINT"
    case SIGTERM: return "SIGTERM"
    case SIGHUP: return "SIGHUP"
    case SIGPIPE: return "SIGPIPE"
    case SIGXFSZ: return "SIGXFSZ"
    default: return "signal \(sig)"
    }
}
