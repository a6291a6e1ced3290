import GPUEncodeKit
import Glibc

/// Where the studio may write a preset: a `.json` file directly in the preset's folder or in an
/// `--allow-path` folder, or in a folder below one of those. Checked on the real path of the file's
/// folder, so a `..` or a symbolic link that leads out is refused like an absolute path elsewhere.
/// A symbolic link at the name itself is refused too: it is neither followed (that would write
/// wherever it points) nor silently replaced.
///
/// The write does not trust the check: it opens the root folder and walks down to the file's folder
/// one component at a time without following links (ContainedDirectory), then writes and renames
/// relative to it, so a folder swapped for a link after the check fails the save instead of
/// taking it outside.
struct PresetSaver {
    /// The preset's folder, canonical.
    let home: String
    let allowed: AllowedPaths

    struct Refusal: Error { let message: String }

    /// Where a save goes: the root folder it stays under, the folders below it, the file's name.
    struct Destination {
        let root: String
        /// The folders between `root` and the file (`a/b`), empty for the root itself.
        let below: String
        let name: String
        /// The canonical path the file is written to.
        let path: String
    }

    /// Where `name` would be written, checked.
    func destination(_ name: String) throws -> Destination {
        guard !name.isEmpty, !name.contains("\0") else { throw Refusal(message: "give a file name ending in .json") }
        let path = name.hasPrefix("/") ? name : "\(home)/\(name)"
        let (dir, base) = splitPath(path)
        guard base.lowercased().hasSuffix(".json"), base != ".json", !base.hasPrefix(".") || base.count > 5 else {
            throw Refusal(message: "\(name): a preset is saved as a .json file")
        }
        guard let realDir = realPath(dir), isDirectory(realDir) else { throw Refusal(message: "\(name): no such folder \(dir)") }
        // The innermost root that holds it: the fewest folders to walk.
        let roots = ([home] + allowed.directories).filter { AllowedPaths.isInside(realDir, $0) }
        guard let root = roots.max(by: { $0.count < $1.count }) else {
            let extra = allowed.directories.isEmpty ? "" : " or the --allow-path folders"
            throw Refusal(message: "\(name) is outside the preset's folder \(home)\(extra); to allow it, pass --allow-path DIR")
        }
        let below = realDir == root ? "" : String(realDir.dropFirst(root == "/" ? 1 : root.count + 1))
        let target = realDir == "/" ? "/\(base)" : "\(realDir)/\(base)"
        var st = stat()
        if lstat(target, &st) == 0 { try PresetSaver.checkExisting(st.st_mode & S_IFMT, name) }
        return Destination(root: root, below: below, name: base, path: target)
    }

    /// Writes `text` to `destination` atomically: a temporary beside it, then a rename, both in the
    /// folder reached from the root without following links.
    func write(_ text: String, to destination: Destination) throws {
        let folder: ContainedDirectory
        do {
            folder = try ContainedDirectory(root: destination.root).descend(destination.below, creating: false)
        } catch let e as GPUEncodeError {
            throw Refusal(message: "\(destination.path): not saved: \(e.description)")
        }
        // Checked again where the file is written: something put at the name since the check.
        if let type = folder.fileType(destination.name) { try PresetSaver.checkExisting(type, destination.path) }
        try writeFileAtomically(Array(text.utf8), in: folder, to: destination.path, overwrite: true)
    }

    /// A file at the name is replaced only when it is a regular file.
    private static func checkExisting(_ type: mode_t, _ name: String) throws {
        if type == S_IFLNK { throw Refusal(message: "\(name) is a symbolic link; the studio does not write through links") }
        if type != S_IFREG { throw Refusal(message: "\(name) exists and is not a regular file") }
    }
}
