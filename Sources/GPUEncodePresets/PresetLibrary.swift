import Glibc
import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodeSettings

/// Where `--preset NAME` looks: the `--preset-dir` folders in the order given, then the user folder
/// (the command line passes `$XDG_CONFIG_HOME/gpuencode/presets`, by default
/// `~/.config/gpuencode/presets`: see `userDirectory(environment:)`), then the built-in presets. A
/// preset is `NAME.json` in a folder; the first one found wins, so a user preset named like a
/// built-in shadows it. Anything with a `/` or ending in `.json` is a file path.
///
/// Every command that takes `--preset` should load through here:
///
///     let preset = try PresetLibrary(presetDirectories: presetDirs, userDirectory: user).load(spec)
public struct PresetLibrary: Sendable {
    /// The folders searched before the built-ins, first to last.
    public let directories: [String]
    /// Folders beyond each preset's own that its file references may point into (`--allow-path`).
    public let allowed: AllowedPaths

    /// `userDirectory`: searched after `presetDirectories` (nil: none). The library reads no
    /// environment variables; a program finds the user's folder with `userDirectory(environment:)`.
    public init(presetDirectories: [String] = [], userDirectory: String? = nil, allowed: AllowedPaths = .none) {
        var dirs = presetDirectories
        if let userDirectory { dirs.append(userDirectory) }
        directories = dirs
        self.allowed = allowed
    }

    /// `$XDG_CONFIG_HOME/gpuencode/presets` when that is an absolute path, else
    /// `$HOME/.config/gpuencode/presets`; nil without either. `environment` looks a variable up
    /// (the command line passes getenv).
    public static func userDirectory(environment: (String) -> String?) -> String? {
        if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") {
            return xdg + "/gpuencode/presets"
        }
        guard let home = environment("HOME"), !home.isEmpty else { return nil }
        return home + "/.config/gpuencode/presets"
    }

    public struct Entry: Sendable {
        public let name: String
        /// The file, or `builtin:NAME`.
        public let origin: String
        public var isBuiltin: Bool { origin.hasPrefix("builtin:") }
        /// The description, or why the preset does not load.
        public let description: String
        public let isValid: Bool
        /// The origin of the preset that hides this one (same name, found earlier); nil if it is used.
        public let shadowedBy: String?
    }

    /// `NAME.json` files of a folder, sorted by name.
    static func presetFiles(in dir: String) -> [(name: String, path: String)] {
        (directoryEntries(dir) ?? []).compactMap { name in
            guard name.hasSuffix(".json"), !name.hasPrefix("."), name.count > 5 else { return nil }
            let path = dir + "/" + name
            return isDirectory(path) ? nil : (String(name.dropLast(5)), path)
        }.sorted { $0.name < $1.name }
    }

    /// Every preset the folders and the built-ins hold, the ones in use and the shadowed ones,
    /// sorted by name (the one in use first).
    public func entries() -> [Entry] {
        var candidates: [(name: String, origin: String)] = []
        for dir in directories { candidates += PresetLibrary.presetFiles(in: dir).map { ($0.name, $0.path) } }
        candidates += Preset.builtinNames.map { ($0, "builtin:\($0)") }
        var winner: [String: String] = [:]
        var result: [Entry] = []
        for c in candidates {
            let check = c.origin.hasPrefix("builtin:")
                ? Preset.check(json: Preset.builtinSource(String(c.origin.dropFirst(8))) ?? "", origin: c.origin)
                : Preset.checkFile(c.origin, allowed: allowed)
            let description = check.preset?.description ?? "invalid: \(check.errors.first?.located ?? "does not load")"
            let shadow = winner[c.name]
            if shadow == nil { winner[c.name] = c.origin }
            result.append(Entry(name: c.name, origin: c.origin, description: description, isValid: check.preset != nil, shadowedBy: shadow))
        }
        return result.enumerated().sorted { a, b in
            a.element.name != b.element.name ? a.element.name < b.element.name : a.offset < b.offset
        }.map(\.element)
    }

    /// The names `--preset NAME` can take here: the folders' presets and the built-ins, sorted, each
    /// once. Nothing is loaded or checked (shell completion asks for this on every Tab).
    public func names() -> [String] {
        var all = Set(Preset.builtinNames)
        for dir in directories { all.formUnion(PresetLibrary.presetFiles(in: dir).map(\.name)) }
        return all.sorted()
    }

    /// The file a name resolves to in the folders (nil: not there; it may still be a built-in).
    public func file(named name: String) -> String? {
        for dir in directories {
            let path = dir + "/" + name + ".json"
            if fileExists(path) && !isDirectory(path) { return path }
        }
        return nil
    }

    /// The origin `spec` resolves to: a path as given, a user preset's file, or `builtin:NAME`.
    public func resolve(_ spec: String) throws -> String {
        if Preset.isPath(spec) { return spec }
        if let path = file(named: spec) { return path }
        if Preset.builtinSource(spec) != nil { return "builtin:\(spec)" }
        var names = Set(Preset.builtinNames)
        for dir in directories { names.formUnion(PresetLibrary.presetFiles(in: dir).map(\.name)) }
        let all = names.sorted()
        if EncoderSettings.speeds.contains(spec) {
            // ffmpeg's -preset is x264's speed; an ffmpeg user typing --preset fast means that.
            throw GPUEncodeError(.preset, path: spec,
                                 "no preset by that name: --preset is the look (the filters; `gpuencode presets` lists them), and \"\(spec)\" is an encoder speed, which --speed \(spec) sets (ffmpeg's -preset \(spec))")
        }
        let hint = suggestion(for: spec, among: all).map { " (did you mean \"\($0)\"?)" } ?? ""
        let whereTo = directories.isEmpty ? "" : " (looked in \(directories.joined(separator: ", ")) and the built-ins)"
        throw GPUEncodeError(.preset, path: spec,
                             "unknown preset\(hint)\(whereTo); `gpuencode presets` lists them, or give a path to a .json file")
    }

    /// Loads a preset by name (user folders, then built-ins) or path.
    public func load(_ spec: String) throws -> Preset {
        let origin = try resolve(spec)
        if origin.hasPrefix("builtin:") { return try Preset.load(String(origin.dropFirst(8))) }
        return try Preset.loadFile(origin, allowed: allowed)
    }
}
