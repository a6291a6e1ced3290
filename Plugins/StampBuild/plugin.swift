import Foundation
import PackagePlugin

/// Writes the release version (from the VERSION file, the one place it is set) into GPUEncodeCore,
/// and the commit the program was built from into the command-line tool, for `gpuencode --version`.
/// The commit goes only into the leaf target, so a new commit recompiles one file, not the library.
@main
struct StampBuild: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let script = package.appending(path: "Plugins/StampBuild/stamp.sh")
        let kind = target.name == "GPUEncodeCore" ? "version" : "commit"
        var inputs = [script, package.appending(path: "VERSION")]
        // The files whose change means another commit is checked out: HEAD and the ref it names.
        if kind == "commit" { inputs += gitHeadFiles(package) }
        let output = context.pluginWorkDirectoryURL.appending(path: kind == "version" ? "Version.swift" : "BuildStamp.swift")
        return [
            .buildCommand(
                displayName: "Stamping the \(kind) into \(target.name)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path(), package.path(), output.path(), kind],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }

    /// HEAD, the branch file it points at and packed-refs, where they exist; `.git` may be a
    /// folder or, in a worktree, a file naming the real one.
    private func gitHeadFiles(_ package: URL) -> [URL] {
        let fm = FileManager.default
        let dotGit = package.appending(path: ".git")
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: dotGit.path(), isDirectory: &isDirectory) else { return [] }
        var gitDir = dotGit
        if !isDirectory.boolValue {
            guard let text = try? String(contentsOf: dotGit, encoding: .utf8), text.hasPrefix("gitdir:") else { return [] }
            let path = text.dropFirst("gitdir:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDir = path.hasPrefix("/") ? URL(fileURLWithPath: path) : package.appending(path: path)
        }
        var common = gitDir
        if let text = try? String(contentsOf: gitDir.appending(path: "commondir"), encoding: .utf8) {
            let path = text.trimmingCharacters(in: .whitespacesAndNewlines)
            common = path.hasPrefix("/") ? URL(fileURLWithPath: path) : gitDir.appending(path: path)
        }
        var files = [gitDir.appending(path: "HEAD"), common.appending(path: "packed-refs")]
        if let head = try? String(contentsOf: gitDir.appending(path: "HEAD"), encoding: .utf8), head.hasPrefix("ref:") {
            let ref = head.dropFirst("ref:".count).trimmingCharacters(in: .whitespacesAndNewlines)
            files.append(common.appending(path: ref))
        }
        return files.filter { fm.fileExists(atPath: $0.path()) }
    }
}
