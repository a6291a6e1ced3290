import ArgumentParser
import GPUEncodeKit

extension CompletionKind {
    /// What `--preset` (and `presets show`) completes to: the names of the built-in presets and of
    /// the user's and the line's `--preset-dir` presets; once the word looks like a path (a `/` or a
    /// leading `.` or `~`), the .json files and folders there instead. The shell runs
    /// `gpuencode ---completion ...` for this on each Tab, so it reads folder listings only.
    static var presets: CompletionKind {
        .custom { words, _, prefix in
            if prefix.contains("/") || prefix.hasPrefix(".") || prefix.hasPrefix("~") {
                return presetPaths(matching: prefix)
            }
            var dirs: [String] = []
            for (i, word) in words.enumerated() where word == "--preset-dir" && i + 1 < words.count {
                dirs.append(words[i + 1])
            }
            let library = PresetLibrary(presetDirectories: dirs, userDirectory: Environment.userPresetDirectory)
            return library.names().filter { $0.hasPrefix(prefix) }
        }
    }
}

/// Folders and .json files whose path starts with `prefix`, as the shell would list them.
private func presetPaths(matching prefix: String) -> [String] {
    let slash = prefix.lastIndex(of: "/")
    let shown = slash.map { String(prefix[...$0]) } ?? ""
    var dir = shown.isEmpty ? "." : shown
    if dir.hasPrefix("~"), let home = Environment.value("HOME") { dir = home + dir.dropFirst() }
    let start = slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix
    return (directoryEntries(dir) ?? []).compactMap { name in
        guard name.hasPrefix(start), !name.hasPrefix(".") || start.hasPrefix(".") else { return nil }
        if isDirectory(joinPath(dir, name)) { return shown + name + "/" }
        return name.hasSuffix(".json") ? shown + name : nil
    }
}

