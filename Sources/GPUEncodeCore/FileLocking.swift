import Glibc

/// Runs `body` holding an exclusive flock on `PATH.lock`, so that processes sharing `path` (two
/// batches with one --state) take turns at read-modify-write. A separate lock file because `path`
/// itself is replaced by a rename on every write (a lock on it would hold an old inode). The lock
/// file stays (removing it would let a waiter lock an unlinked inode while a newcomer locks a new
/// one); it is empty, opened without following a symlink and never written.
package func withFileLock<R>(for path: String, _ body: () throws -> R) throws -> R {
    let lockPath = path + ".lock"
    let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o666)
    guard fd >= 0 else {
        throw GPUEncodeError(.outputCreate, path: lockPath, "cannot open the lock file: \(errnoString())")
    }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
        throw GPUEncodeError(.outputCreate, path: lockPath, "the lock file is not a regular file")
    }
    // SIGINT/SIGTERM handlers are installed without SA_RESTART: a signal interrupts the wait, and
    // the state must still be saved afterwards, so wait again.
    while flock(fd, LOCK_EX) != 0 {
        guard errno == EINTR else { throw GPUEncodeError(.outputCreate, path: lockPath, "cannot lock: \(errnoString())") }
    }
    return try body()
}
