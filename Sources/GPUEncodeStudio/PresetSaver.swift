import GPUEncodeKit
import Glibc

/// Where the studio may write a preset: a `.json` file directly in the preset's folder or in an
/// `--allow-path` folder, or in a folder below one of those. Checked on the real path of the file's
/// folder, so a `..` or a symlinked folder that leads out is refused like an absolute path elsewhere.
/// A symbolic link at the name itself is refused too: it is neither followed (that would write
/// wherever it points) nor silently replaced.
struct PresetSaver {
    /// The preset's folder, canonical.
    let home: String
    let allowed: AllowedPaths

    struct Refusal: Error { let message: String }

    /// The canonical path `name` would be written to.
    func destination(_ name: String) throws -> String {
        guard !name.isEmpty, !name.contains("\0") else { throw Refusal(message: "give a file name ending in .json") }
        let path = name.hasPrefix("/") ? name : "\(home)/\(name)"
        let (dir, base) = splitPath(path)
        guard base.lowercased().hasSuffix(".json"), base != ".json", !base.hasPrefix(".") || base.count > 5 else {
            throw Refusal(message: "\(name): a preset is saved as a .json file")
        }
        guard let realDir = realPath(dir), isDirectory(realDir) else { throw Refusal(message: "\(name): no such folder \(dir)") }
        let roots = [home] + allowed.directories
        guard roots.contains(where: { AllowedPaths.isInside(realDir, $0) }) else {
            let extra = allowed.directories.isEmpty ? "" : " or the --allow-path folders"
            throw Refusal(message: "\(name) is outside the preset's folder \(home)\(extra); to allow it, pass --allow-path DIR")
        }
        let target = realDir == "/" ? "/\(base)" : "\(realDir)/\(base)"
        var st = stat()
        if lstat(target, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFLNK { throw Refusal(message: "\(name) is a symbolic link; the studio does not write through links") }
            if (st.st_mode & S_IFMT) != S_IFREG { throw Refusal(message: "\(name) exists and is not a regular file") }
        }
        return target
    }

    /// Writes `text` to `path` (from `destination`) atomically: a temporary beside it, then a rename.
    func write(_ text: String, to path: String) throws {
        try writeFileAtomically(Array(text.utf8), to: path, overwrite: true)
    }
}
