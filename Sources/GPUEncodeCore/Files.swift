import Glibc

package func errnoString(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}

/// Identity of a file on disk, to refuse writing over the input through another path.
package func fileIdentity(_ path: String) -> (dev: UInt, ino: UInt)? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return (UInt(st.st_dev), UInt(st.st_ino))
}

package func fileExists(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0
}

package func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}

package func splitPath(_ path: String) -> (dir: String, base: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let dir = String(path[..<slash])
    return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
}

package func pathExtension(_ path: String) -> String {
    let base = splitPath(path).base
    guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return "" }
    return String(base[base.index(after: dot)...]).lowercased()
}

/// `realpath(3)`: absolute, symlinks and `..` resolved; nil (errno set) when it does not exist.
package func realPath(_ path: String) -> String? {
    guard let p = realpath(path, nil) else { return nil }
    defer { free(p) }
    return String(cString: p)
}
