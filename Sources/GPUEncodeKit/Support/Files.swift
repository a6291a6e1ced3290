import Glibc

func errnoString(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// Identity of a file on disk, to refuse writing over the input through another path.
func fileIdentity(_ path: String) -> (dev: UInt, ino: UInt)? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return (UInt(st.st_dev), UInt(st.st_ino))
}

func fileExists(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0
}

func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

func splitPath(_ path: String) -> (dir: String, base: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let dir = String(path[..<slash])
    return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
}

func pathExtension(_ path: String) -> String {
    let base = splitPath(path).base
    guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return "" }
    return String(base[base.index(after: dot)...]).lowercased()
}

/// Writes a whole file through a hidden temporary beside it and a rename, so readers never see a
/// partial file; refuses to replace an existing one unless `overwrite`.
func writeFileAtomically(_ bytes: [UInt8], to path: String, overwrite: Bool) throws {
    let (dir, base) = splitPath(path)
    guard isDirectory(dir) else { throw GPUEncodeError(.outputCreate, path: path, "directory \(dir) does not exist") }
    if !overwrite && fileExists(path) {
        throw GPUEncodeError(.outputCreate, path: path, "already exists (use -y to overwrite)")
    }
    let temp = "\(dir)/.\(base).\(getpid()).partial"
    guard let f = fopen(temp, "wb") else { throw GPUEncodeError(.outputCreate, path: path, "cannot create: \(errnoString())") }
    let written = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, bytes.count, f) }
    let closed = fclose(f)
    guard written == bytes.count, closed == 0 else {
        unlink(temp)
        throw GPUEncodeError(.encode, path: path, "writing failed: \(errnoString())")
    }
    guard rename(temp, path) == 0 else {
        let reason = errnoString()
        unlink(temp)
        throw GPUEncodeError(.outputCreate, path: path, "cannot rename into place: \(reason)")
    }
}
