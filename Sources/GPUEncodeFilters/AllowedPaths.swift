import Glibc
import GPUEncodeCore

/// Where the files a preset names may be: under the preset's own folder, or under a folder named
/// with `--allow-path DIR`. A preset is data that may come from anywhere (a download, a shared
/// folder), so without this one could read any file the user can (`"file": "/home/me/.ssh/id_rsa"`
/// as a lookup image, whose bytes then show in the output) or probe which files exist.
///
/// Paths are compared after `realpath`, so a `..` or a symlink inside the preset's folder that leads
/// out of it is refused just as an absolute path elsewhere is. Built-in presets read only the files
/// embedded with them; `ResourceContext` without a folder (library use, tests) is not checked.
public struct AllowedPaths: Sendable, Equatable {
    /// The `--allow-path` folders, canonical (symlinks resolved, no trailing slash).
    public let directories: [String]

    /// Nothing beyond each preset's own folder.
    public static let none = AllowedPaths(canonical: [])

    init(canonical: [String]) { directories = canonical }

    /// Folders as given on the command line; each must exist and be a directory (else a usage
    /// error, 64, naming it).
    public init(_ folders: [String]) throws {
        var list: [String] = []
        for folder in folders {
            guard let real = realPath(folder) else {
                throw GPUEncodeError(.usage, path: folder, "--allow-path: \(errnoString())")
            }
            guard isDirectory(real) else { throw GPUEncodeError(.usage, path: folder, "--allow-path: not a directory") }
            list.append(real)
        }
        directories = list
    }

    /// The canonical path of `path` (already joined to the preset's folder) when it lies under
    /// `presetDirectory` or an allowed folder; `name` is how the preset wrote it, for the error.
    func contain(_ path: String, named name: String, presetDirectory: String) throws -> String {
        let home = realPath(presetDirectory) ?? presetDirectory
        guard let real = realPath(path) else {
            let reason = errno == ENOENT ? "no such file" : errnoString()
            // A missing file outside is refused as outside, so a preset cannot probe which files
            // exist elsewhere by the message it gets.
            let where_ = canonicalOutputPath(path)
            if !([home] + directories).contains(where: { AllowedPaths.isInside(where_, $0) }) {
                throw FilterError("\(name) is outside the preset's folder \(home); to allow it, pass --allow-path DIR")
            }
            throw FilterError("cannot read \(path): \(reason)")
        }
        for root in [home] + directories where AllowedPaths.isInside(real, root) { return real }
        let resolved = real == path ? "" : " (it resolves to \(real))"
        let extra = directories.isEmpty ? "" : " or the --allow-path folders"
        throw FilterError("\(name) is outside the preset's folder \(home)\(extra)\(resolved); to allow it, pass --allow-path DIR")
    }

    package static func isInside(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }
}
