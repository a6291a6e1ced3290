import CSystemShim
import Glibc

/// A folder held by its descriptor, below which folders are walked and files made without
/// following any symbolic link. A writer that promises its files land under a folder (the studio's
/// save, a batch's --out-dir) checks a path and then writes; by path, a folder swapped for a link
/// between the check and the write takes the write wherever the link points. Held, the folder
/// cannot be swapped under the write: every folder below it is opened from its parent's descriptor
/// with O_DIRECTORY|O_NOFOLLOW (a link fails), and the temporary and the rename are relative to the
/// last one (TemporaryFile).
///
/// The root itself is opened by the path the user gave, once: links in that path are the user's
/// own choice and are followed then, never again.
package final class ContainedDirectory: Sendable {
    /// How the folder was reached (root + the components walked), for messages only: nothing is
    /// ever opened by it again.
    package let path: String
    package let fd: Int32

    /// Opens `root` (following links in the path given). A missing folder or anything else that
    /// cannot be opened as a folder is an output error (73) naming it.
    package init(root: String) throws {
        let rc = gpuencode_open_directory(root)
        guard rc >= 0 else {
            let reason = -rc == ENOENT ? "no such folder" : -rc == ENOTDIR ? "not a folder" : errnoString(-rc)
            throw GPUEncodeError(.outputCreate, path: root, "cannot open the folder: \(reason)")
        }
        path = root
        fd = rc
    }

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// The folder `relative` below this one (`a/b`; `.` and empty components skipped), each
    /// component opened from its parent's descriptor without following a link. `creating` makes
    /// the missing ones (as `mkdir -p` would, 0755 less the umask). A `..`, a link or anything that
    /// is not a folder on the way is an output error (73) naming where; the caller's files are then
    /// not written anywhere.
    package func descend(_ relative: String, creating: Bool) throws -> ContainedDirectory {
        var current = self
        for component in relative.split(separator: "/") where component != "." {
            let name = String(component)
            let here = current.path == "/" ? "/\(name)" : "\(current.path)/\(name)"
            guard name != ".." else {
                throw GPUEncodeError(.outputCreate, path: here, "a \"..\" below \(path) is not followed; files here stay inside it")
            }
            var rc = gpuencode_open_directory_below(current.fd, name)
            if rc == -ENOENT && creating {
                if mkdirat(current.fd, name, 0o755) != 0 && errno != EEXIST {
                    throw GPUEncodeError(.outputCreate, path: here, "cannot create the folder: \(errnoString())")
                }
                rc = gpuencode_open_directory_below(current.fd, name)
            }
            guard rc >= 0 else { throw refusal(here, name: name, in: current, code: -rc) }
            current = ContainedDirectory(path: here, fd: rc)
        }
        return current
    }

    /// Why `name` in `parent` could not be opened as a folder, in words the user can act on.
    private func refusal(_ here: String, name: String, in parent: ContainedDirectory, code: Int32) -> GPUEncodeError {
        var st = stat()
        if fstatat(parent.fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == S_IFLNK {
            return GPUEncodeError(.outputCreate, path: here, "is a symbolic link; files under \(path) are not written through links")
        }
        if code == ENOENT { return GPUEncodeError(.outputCreate, path: here, "no such folder") }
        if code == ENOTDIR || code == ELOOP { return GPUEncodeError(.outputCreate, path: here, "is not a folder") }
        return GPUEncodeError(.outputCreate, path: here, "cannot open the folder: \(errnoString(code))")
    }

    /// The file type of `name` here, not following a link (S_IFREG, S_IFLNK...); nil when nothing is there.
    package func fileType(_ name: String) -> mode_t? {
        var st = stat()
        guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return st.st_mode & S_IFMT
    }
}
