import Glibc
import GPUEncodeKit

/// One file to transcode: an input, its output and the preset with its settings.
public struct BatchJob: Sendable {
    /// Position in the whole plan (before sharding), from 0.
    public let index: Int
    public let input: String
    public let output: String
    /// The preset as asked for (`sepia`, `looks/warm.json`).
    public let presetSpec: String
    /// The inline filters as given (`--filter` or the manifest's `filter` column), run after the
    /// preset's chain; they are in `preset.filters` and its digest.
    public let filterSpec: String?
    public let preset: Preset
    /// `fnv1a64:` hash of the preset's resolved JSON: the same preset however it was named.
    public let presetDigest: String
    /// The manifest row's settings over the batch's flags (the preset's are in `preset.encode`).
    public let overrides: EncodeOverrides
    /// What the job encodes with: manifest row > batch flag > preset's `encode` > defaults,
    /// checked for the codec when the batch was planned.
    public let settings: EncoderSettings
    /// Where the job came from, for messages: `jobs.csv:4`, or the argument.
    public let origin: String
    /// For an output under --out-dir: that folder and the output's path below it (mirrored
    /// subfolders and the name). The job opens the folder and walks down to the output's own
    /// without following links, so every file it writes stays under --out-dir. Nil for an output
    /// a manifest names.
    public var underOutDir: (folder: String, below: String)?

    /// The encoder settings this job runs with, with `threads` unless the batch gave --threads.
    public func encoderSettings(threads: Int) -> EncoderSettings {
        var e = settings
        if overrides.threads == nil { e.threads = threads }
        return e
    }

    /// Hash of every encoder setting that shapes the output (`EncoderSettings.digestText`; threads
    /// excluded: they change x264's bits, but not what the user asked for). Settings at their
    /// defaults leave the text as it was before they existed, so older state files still match.
    public var settingsDigest: String {
        "fnv1a64:" + FNV1a64.hex(FNV1a64.hash(settings.digestText))
    }

    /// What the shard assignment hashes: the input path as planned and the preset as asked for.
    /// Inline filters join it only when given, so jobs without them keep their shards.
    public var shardKey: String { input + "\u{0}" + presetSpec + (filterSpec.map { "\u{0}" + $0 } ?? "") }
}

/// What `gpuencode batch` was asked to do, before any file is looked at.
public struct BatchRequest: Sendable {
    /// Files and folders from the command line.
    public var inputs: [String] = []
    public var recursive = false
    /// fnmatch(3) patterns for files found in folders (files named directly are always taken).
    public var include: [String] = BatchRequest.defaultInclude
    public var manifest: String?
    public var outDir: String?
    public var template = BatchRequest.defaultTemplate
    public var presetSpec = "identity"
    /// `--filter`: inline filters after the preset for every job without a `filter` column value.
    public var filterSpec: String?
    public var overrides = EncodeOverrides()
    public var presetDirectories: [String] = []
    /// Folders beyond each preset's own that its file references may point into (`--allow-path`).
    public var allowed: AllowedPaths = .none

    public init() {}

    public static let defaultInclude = ["*.mp4", "*.m4v", "*.mov", "*.mkv", "*.webm", "*.avi", "*.ts", "*.mts", "*.m2ts", "*.mxf", "*.flv", "*.wmv", "*.mpg", "*.mpeg", "*.3gp"]
    public static let defaultTemplate = "{stem}.mp4"
    public static let templateFields = ["name", "stem", "ext", "preset"]
    static let outputExtensions = ["mp4", "m4v", "mov", "mkv", "webm"]
}

/// Every job of a batch, in a stable order, checked before anything runs.
public struct BatchPlan: Sendable {
    public let jobs: [BatchJob]
    /// Hash of every job's index, input, output, preset and encoder settings: shard reports of one
    /// plan share it.
    public let digest: String

    public init(jobs: [BatchJob]) {
        self.jobs = jobs
        var h = FNV1a64()
        for j in jobs { h.update("\(j.index)\u{0}\(j.input)\u{0}\(j.output)\u{0}\(j.presetSpec)\u{0}\(j.presetDigest)\u{0}\(j.settingsDigest)\n") }
        digest = "fnv1a64:" + FNV1a64.hex(h.value)
    }

    public func jobs(in shard: Shard?) -> [BatchJob] {
        guard let shard, shard.count > 1 else { return jobs }
        return jobs.filter { shard.owns($0) }
    }
}

public enum BatchPlanner {
    /// Expands folders and the manifest, loads each preset once, renders output names and checks that
    /// no two jobs write the same file. Errors are usage (64), missing input (66) or preset (67) errors.
    public static func plan(_ request: BatchRequest) throws -> BatchPlan {
        if request.inputs.isEmpty && request.manifest == nil {
            throw GPUEncodeError(.usage, "give input files or folders, or --manifest FILE")
        }
        try checkTemplate(request.template)
        let library = PresetLibrary(presetDirectories: request.presetDirectories, allowed: request.allowed)
        var presets: [String: (Preset, String)] = [:]
        var combined: [String: (Preset, String)] = [:]
        func preset(_ spec: String) throws -> (Preset, String) {
            if let p = presets[spec] { return p }
            let p = try library.load(spec)
            let digest = "fnv1a64:" + FNV1a64.hex(FNV1a64.hash(PresetWriter.text(p)))
            presets[spec] = (p, digest)
            return (p, digest)
        }
        // The preset with a job's inline filters after it; the digest is the combination's, so a
        // changed filter string redoes the job.
        let workingDirectory = absolutePath(".")
        func preset(_ spec: String, filter: (text: String, origin: String, base: String)?) throws -> (Preset, String) {
            guard let filter else { return try preset(spec) }
            let key = spec + "\u{0}" + filter.text + "\u{0}" + filter.base
            if let p = combined[key] { return p }
            let folder = filter.origin == "--filter" ? "the working directory" : "the manifest's folder"
            let chain = try InlineFilter.parse(filter.text, origin: filter.origin, baseDirectory: filter.base, folder: folder, allowed: request.allowed)
            let p = try preset(spec).0.appending(chain)
            let result = (p, "fnv1a64:" + FNV1a64.hex(FNV1a64.hash(PresetWriter.text(p))))
            combined[key] = result
            return result
        }

        /// `row`: a manifest row's settings (empty for files and folders), above the batch's flags.
        struct Draft {
            let input: String; let relativeDir: String; let output: String?; let presetSpec: String; let row: EncodeOverrides; let origin: String
            /// Inline filters: the text, where errors point (`--filter`, `jobs.csv:3: filter`), where files resolve.
            var filter: (text: String, origin: String, base: String)?
        }
        let flagFilter = request.filterSpec.map { (text: $0, origin: "--filter", base: workingDirectory) }
        var drafts: [Draft] = []
        let outDirAbsolute = request.outDir.map(absolutePath)

        for argument in request.inputs {
            if isDirectory(argument) {
                let files = walk(argument, recursive: request.recursive, include: request.include, skip: outDirAbsolute)
                for rel in files {
                    drafts.append(Draft(input: joinPath(argument, rel), relativeDir: splitPath(rel).base == rel ? "" : splitPath(rel).dir,
                                        output: nil, presetSpec: request.presetSpec, row: EncodeOverrides(), origin: argument, filter: flagFilter))
                }
            } else if fileExists(argument) {
                drafts.append(Draft(input: argument, relativeDir: "", output: nil, presetSpec: request.presetSpec, row: EncodeOverrides(), origin: argument, filter: flagFilter))
            } else {
                throw GPUEncodeError(.input, path: argument, "no such file or folder")
            }
        }
        if let manifest = request.manifest {
            for row in try Manifest.read(manifest) {
                drafts.append(Draft(input: row.input, relativeDir: row.relativeDir, output: row.output,
                                    presetSpec: row.preset ?? request.presetSpec, row: row.overrides,
                                    origin: row.origin, filter: row.filter.map { (text: $0, origin: "\(row.origin): filter", base: row.base) } ?? flagFilter))
            }
        }
        if drafts.isEmpty {
            throw GPUEncodeError(.input, path: request.inputs.first ?? request.manifest, "no input files found (--include \(request.include.joined(separator: ",")), \(request.recursive ? "" : "no ")--recursive)")
        }

        var jobs: [BatchJob] = []
        var writers: [String: BatchJob] = [:]
        var inputs: [String: String] = [:]
        for d in drafts { inputs[absolutePath(d.input)] = d.input }
        for d in drafts {
            let (p, digest) = try preset(d.presetSpec, filter: d.filter)
            let output: String
            var place: (folder: String, below: String)?
            if let explicit = d.output {
                output = explicit
            } else {
                guard let outDir = request.outDir else {
                    throw GPUEncodeError(.usage, path: d.origin, "no output for \(d.input): give --out-dir (or an output column in the manifest)")
                }
                let name = try render(request.template, input: d.input, preset: p, presetSpec: d.presetSpec)
                // The template passed checkTemplate, but a field can expand to `..` (an input named
                // `...mp4` has the stem `..`): the expansion itself must stay under --out-dir.
                if escapesFolder(name) {
                    throw GPUEncodeError(.usage, path: d.input, "--name \"\(request.template)\" gives \"\(name)\", which leaves --out-dir; names must stay inside it")
                }
                place = (outDir, joinPath(d.relativeDir, name))
                output = joinPath(outDir, joinPath(d.relativeDir, name))
            }
            let ext = pathExtension(output)
            guard BatchRequest.outputExtensions.contains(ext) else {
                throw GPUEncodeError(.usage, path: output, "output must end in .mp4, .m4v, .mov, .mkv or .webm (job for \(d.input) from \(d.origin))")
            }
            // Every job's settings are resolved and checked now (a crf off the codec's scale, params
            // for another codec, H.264 in .webm), so a batch with a bad row stops before any work.
            var layers = [EncodeLayer(request.overrides, from: .commandLine), EncodeLayer(p.encode, from: .preset(p.origin))]
            if !d.row.isEmpty { layers.insert(EncodeLayer(d.row, from: .manifest(d.origin)), at: 0) }
            let settings = try EncodeOverrides.resolve(layers, output: output)
            do { try checkOutputContainer(path: output, codec: settings.codec) } catch let e as GPUEncodeError {
                throw GPUEncodeError(.usage, path: output, "\(e.message) (job for \(d.input) from \(d.origin))")
            }
            var job = BatchJob(index: jobs.count, input: d.input, output: output, presetSpec: d.presetSpec, filterSpec: d.filter?.text, preset: p,
                               presetDigest: digest, overrides: d.row.over(request.overrides), settings: settings, origin: d.origin)
            job.underOutDir = place
            let key = absolutePath(output)
            if let other = writers[key] {
                throw GPUEncodeError(.usage, path: output, "written by two jobs: \(other.input) (\(other.origin)) and \(d.input) (\(d.origin)); change --name (e.g. {stem}-{preset}.mp4) or the manifest")
            }
            if let input = inputs[key] {
                throw GPUEncodeError(.usage, path: output, "is also an input (\(input)); write the outputs elsewhere")
            }
            writers[key] = job
            jobs.append(job)
        }
        return BatchPlan(jobs: jobs)
    }

    static func checkTemplate(_ template: String) throws {
        if template.isEmpty || template.hasSuffix("/") { throw GPUEncodeError(.usage, "--name \"\(template)\" must name a file") }
        if template.hasPrefix("/") { throw GPUEncodeError(.usage, "--name \"\(template)\" must be relative to --out-dir") }
        if escapesFolder(template) {
            throw GPUEncodeError(.usage, "--name \"\(template)\" must stay inside --out-dir (no \"..\" in the name)")
        }
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw GPUEncodeError(.usage, "--name \"\(template)\": unclosed {")
            }
            let field = String(rest[rest.index(after: open)..<close])
            guard BatchRequest.templateFields.contains(field) else {
                throw GPUEncodeError(.usage, "--name \"\(template)\": unknown field {\(field)}; use {name}, {stem}, {ext} or {preset}")
            }
            rest = rest[rest.index(after: close)...]
        }
    }

    /// Whether a relative name could leave the folder it is joined to: an absolute path or any
    /// `..` component (refused outright rather than resolved, so that no spelling slips through).
    static func escapesFolder(_ name: String) -> Bool {
        name.hasPrefix("/") || name.split(separator: "/", omittingEmptySubsequences: true).contains("..")
    }

    /// `{name}` the input's file name, `{stem}` without its extension, `{ext}` its extension (no
    /// dot), `{preset}` the preset's name.
    public static func render(_ template: String, input: String, preset: Preset, presetSpec: String) throws -> String {
        let name = splitPath(input).base
        var stem = name
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { stem = String(name[..<dot]) }
        let ext = name.count > stem.count ? String(name[name.index(after: name.index(name.startIndex, offsetBy: stem.count))...]) : ""
        var presetName = preset.name.isEmpty ? presetSpec : preset.name
        presetName = String(presetName.map { $0 == "/" ? "_" : $0 })
        var out = template
        out = out.replacingAll("{name}", with: name)
        out = out.replacingAll("{stem}", with: stem)
        out = out.replacingAll("{ext}", with: ext)
        out = out.replacingAll("{preset}", with: presetName)
        return out
    }

    /// Files under `root` matching `include`, as paths relative to it, sorted; hidden files and
    /// folders, symbolic links to folders and the output folder are left out.
    static func walk(_ root: String, recursive: Bool, include: [String], skip: String?) -> [String] {
        var found: [String] = []
        func visit(_ rel: String) {
            let dir = joinPath(root, rel)
            if let skip, absolutePath(dir) == skip, !rel.isEmpty { return }
            guard let names = directoryEntries(dir) else { return }
            for name in names where !name.hasPrefix(".") {
                let relPath = rel.isEmpty ? name : rel + "/" + name
                let path = joinPath(root, relPath)
                var st = stat()
                guard lstat(path, &st) == 0 else { continue }
                if (st.st_mode & S_IFMT) == S_IFDIR {
                    if recursive { visit(relPath) }
                } else if isDirectory(path) {
                    continue  // a link to a folder: not followed (no loops)
                } else if include.contains(where: { globMatches($0, name) }) {
                    found.append(relPath)
                }
            }
        }
        visit("")
        return found
    }
}

/// A manifest row: one job.
struct ManifestRow {
    let input: String
    /// The folder part of the input as written (relative, without `..`), mirrored under --out-dir.
    let relativeDir: String
    let output: String?
    let preset: String?
    /// Inline filters after the preset (the `filter` column), their files relative to `base`.
    let filter: String?
    /// The manifest's folder, absolute.
    let base: String
    let overrides: EncodeOverrides
    let origin: String
}

/// `--manifest jobs.json` (an array of objects, or `{"jobs": [...]}`) or `jobs.csv` (a header row
/// naming the columns). Fields: input (required), output, preset, filter, and every encode setting a
/// manifest takes (`EncodeSetting.manifestKeys`: codec, speed, crf, ...; also in snake_case or
/// kebab-case, and x264Preset for speed). Metadata is `metadata.KEY` columns in CSV, a
/// `"metadata": {KEY: VALUE}` object in JSON. Relative paths are relative to the manifest's folder.
enum Manifest {
    /// The fields that are not encode settings (`filter`: inline filters after the preset, as --filter).
    static let pathFields = ["input", "output", "preset", "filter"]
    static var fields: [String] { pathFields + EncodeSetting.manifestKeys }
    static let metadataPrefix = "metadata."

    /// The field a column or member names (a setting's key in any spelling), or nil.
    static func field(_ name: String) -> String? {
        if pathFields.contains(name) { return name }
        if name.hasPrefix(metadataPrefix) && name.count > metadataPrefix.count { return name }
        return EncodeSetting.forColumn(name)?.key
    }

    static func read(_ path: String) throws -> [ManifestRow] {
        let text: String
        guard fileExists(path) else { throw GPUEncodeError(.input, path: path, "no such manifest") }
        do { text = try readTextFileSafely(path, kind: .manifest) } catch let e as FileReadError {
            throw GPUEncodeError(.input, path: path, "cannot read the manifest: \(e.reason)")
        }
        let base = splitPath(path).dir
        var records: [(origin: String, values: [String: String])] = []
        let ext = pathExtension(path)
        if ext == "csv" {
            let rows: [(line: Int, fields: [String])]
            do { rows = try parseCSV(text) } catch let e as GPUEncodeError { throw GPUEncodeError(.usage, path: path, e.message) }
            guard let header = rows.first else { throw GPUEncodeError(.usage, path: path, "empty manifest (a header row and one row per job)") }
            var names: [String] = []
            for raw in header.fields {
                guard let n = field(raw.trimmingSpaces) else {
                    throw GPUEncodeError(.usage, path: path, "line \(header.line): unknown column \"\(raw)\"; use \(fields.joined(separator: ", ")) or metadata.KEY")
                }
                if names.contains(n) { throw GPUEncodeError(.usage, path: path, "line \(header.line): column \"\(raw)\" given twice") }
                names.append(n)
            }
            guard names.contains("input") else { throw GPUEncodeError(.usage, path: path, "line \(header.line): no \"input\" column") }
            for row in rows.dropFirst() {
                guard row.fields.count <= names.count else {
                    throw GPUEncodeError(.usage, path: path, "line \(row.line): \(row.fields.count) fields, the header has \(names.count)")
                }
                var values: [String: String] = [:]
                for (i, v) in row.fields.enumerated() {
                    let t = v.trimmingSpaces
                    if !t.isEmpty { values[names[i]] = t }
                }
                records.append(("\(path):\(row.line)", values))
            }
        } else if ext == "json" {
            let json: JSONValue
            do { json = try JSONParser.parse(text) } catch let e as JSONSyntaxError {
                throw GPUEncodeError(.usage, path: path, "\(e.line):\(e.column): \(e.message)")
            }
            let list = json.arrayValue ?? json["jobs"]?.arrayValue
            guard let list else { throw GPUEncodeError(.usage, path: path, "expected an array of jobs, or {\"jobs\": [...]}") }
            for (i, item) in list.enumerated() {
                let origin = "\(path):\(item.line)"
                guard let members = item.objectMembers else {
                    throw GPUEncodeError(.usage, path: path, "\(item.line):\(item.column): jobs[\(i)] must be an object")
                }
                var values: [String: String] = [:]
                for m in members {
                    guard let key = field(m.key) else {
                        throw GPUEncodeError(.usage, path: path, "\(m.value.line):\(m.value.column): jobs[\(i)].\(m.key) is not a job field; use \(fields.joined(separator: ", "))")
                    }
                    let at = "\(m.value.line):\(m.value.column): jobs[\(i)].\(m.key)"
                    switch m.value.kind {
                    case .string(let s): values[key] = s
                    case .number(let n): values[key] = JSONWriter.number(n)
                    case .bool(let b): values[key] = b ? "true" : "false"
                    case .null: break
                    case .array(let items) where key == "audioTracks":
                        // [1, 3] as well as "1,3".
                        values[key] = try items.map { item -> String in
                            guard case .number(let n) = item.kind else { throw GPUEncodeError(.usage, path: path, "\(at) must list numbers") }
                            return JSONWriter.number(n)
                        }.joined(separator: ",")
                    case .object(let entries) where key == "metadata":
                        for e in entries {
                            guard case .string(let v) = e.value.kind else {
                                throw GPUEncodeError(.usage, path: path, "\(e.value.line):\(e.value.column): jobs[\(i)].metadata.\(e.key) must be a string")
                            }
                            values[metadataPrefix + e.key] = v
                        }
                    default: throw GPUEncodeError(.usage, path: path, "\(at) must be a string or a number")
                    }
                }
                records.append((origin, values))
            }
        } else {
            throw GPUEncodeError(.usage, path: path, "a manifest is .json or .csv")
        }
        return try records.map { r in
            let v = r.values
            guard let input = v["input"], !input.isEmpty else { throw GPUEncodeError(.usage, path: r.origin, "no input") }
            var o = EncodeOverrides()
            // Each column by its setting's rule, the one its command-line flag has (EncodeSetting).
            for (name, text) in v.sorted(by: { $0.key < $1.key }) where !pathFields.contains(name) {
                if name.hasPrefix(metadataPrefix) {
                    let key = String(name.dropFirst(metadataPrefix.count))
                    if let problem = EncodeSetting.named("metadata")!.apply(key + "=" + text, at: .manifest, to: &o) {
                        throw GPUEncodeError(.usage, path: r.origin, "\(name): \(problem)")
                    }
                } else if let setting = EncodeSetting.named(name), let problem = setting.apply(text, at: .manifest, to: &o) {
                    throw GPUEncodeError(.usage, path: r.origin, "\(name): \(problem)")
                }
            }
            let inputPath = input.hasPrefix("/") ? input : joinPath(base, input)
            let written = splitPath(input)
            let relDir = input.hasPrefix("/") || input.split(separator: "/").contains("..") || written.base == input ? "" : normalizePath(written.dir)
            let output = v["output"].map { $0.hasPrefix("/") ? $0 : joinPath(base, $0) }
            return ManifestRow(input: inputPath, relativeDir: relDir == "." ? "" : relDir, output: output, preset: v["preset"],
                               filter: v["filter"], base: absolutePath(base), overrides: o, origin: r.origin)
        }
    }
}

/// Which part of the plan this machine runs: jobs whose stable hash modulo `count` is `index - 1`.
/// Adding a file to the plan moves no other job; only `count` changes reshuffle.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    /// 1 ... count.
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    public var description: String { "\(index)/\(count)" }

    /// `INDEX/COUNT`, INDEX from 1.
    public static func parse(_ text: String) throws -> Shard {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1 else {
            throw GPUEncodeError(.usage, "--shard \(text) must be INDEX/COUNT, e.g. 1/4 (INDEX from 1 to COUNT)")
        }
        guard (1...n).contains(i) else {
            throw GPUEncodeError(.usage, "--shard \(text): INDEX must be from 1 to \(n) (it counts from 1)")
        }
        return Shard(index: i, count: n)
    }

    /// The CI's standard variables: GitLab `CI_NODE_INDEX`/`CI_NODE_TOTAL` (from 1), CircleCI
    /// `CIRCLE_NODE_INDEX`/`CIRCLE_NODE_TOTAL`, Buildkite `BUILDKITE_PARALLEL_JOB`/
    /// `BUILDKITE_PARALLEL_JOB_COUNT` (from 0), Kubernetes `JOB_COMPLETION_INDEX` (from 0) with
    /// `shardCount`. Returns the shard and the variables it came from; nil when none are set.
    ///
    /// Never guesses: a machine that looks sharded but cannot tell which shard is a usage error, not
    /// "run every job", which would run the whole plan once per machine. So `shardCount` without
    /// `JOB_COMPLETION_INDEX`, `JOB_COMPLETION_INDEX` without `shardCount`, an index without its
    /// total and a total above 1 without its index are all errors. A total of 1 alone is not one:
    /// GitLab sets `CI_NODE_TOTAL=1` on every job without `parallel:`. The pairs are read in the order
    /// above, `shardCount` (a flag, so explicit) first; `--shard` is read before any of this.
    public static func fromEnvironment(_ env: (String) -> String?, shardCount: Int?) throws -> (Shard, String)? {
        func value(_ name: String) -> String? {
            guard let text = env(name), !text.isEmpty else { return nil }
            return text
        }
        if let n = shardCount {
            guard let iText = value("JOB_COMPLETION_INDEX") else {
                throw GPUEncodeError(.usage, "--shard-count \(n) needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) or use --shard INDEX/COUNT")
            }
            guard let i = Int(iText), n >= 1, (0..<n).contains(i) else {
                throw GPUEncodeError(.usage, "JOB_COMPLETION_INDEX=\(iText) is not an index from 0 to \(n - 1) (--shard-count \(n))")
            }
            return (Shard(index: i + 1, count: n), "JOB_COMPLETION_INDEX/--shard-count")
        }
        func pair(_ indexName: String, _ totalName: String, base: Int) throws -> (Shard, String)? {
            switch (value(indexName), value(totalName)) {
            case (nil, nil):
                return nil
            case (let iText?, nil):
                throw GPUEncodeError(.usage, "\(indexName)=\(iText) is set but \(totalName) is not: set both, or give --shard INDEX/COUNT")
            case (nil, let nText?):
                if Int(nText) == 1 { return nil }
                throw GPUEncodeError(.usage, "\(totalName)=\(nText) is set but \(indexName) is not: set both, or give --shard INDEX/COUNT")
            case (let iText?, let nText?):
                guard let i = Int(iText), let n = Int(nText), n >= 1, (base..<(n + base)).contains(i) else {
                    throw GPUEncodeError(.usage, "\(indexName)=\(iText) \(totalName)=\(nText): not an index from \(base) and a count of shards")
                }
                return (Shard(index: i - base + 1, count: n), "\(indexName)/\(totalName)")
            }
        }
        if let s = try pair("CI_NODE_INDEX", "CI_NODE_TOTAL", base: 1) { return s }
        if let s = try pair("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", base: 0) { return s }
        if let s = try pair("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", base: 0) { return s }
        if let iText = value("JOB_COMPLETION_INDEX") {
            throw GPUEncodeError(.usage, "JOB_COMPLETION_INDEX=\(iText) is set (a Kubernetes Indexed Job) but --shard-count is not: give --shard-count N (the Job's completions) or --shard INDEX/COUNT")
        }
        return nil
    }

    /// The shard (1 ... count) a job belongs to.
    public static func assign(_ job: BatchJob, count: Int) -> Int {
        assign(key: job.shardKey, count: count)
    }

    public static func assign(key: String, count: Int) -> Int {
        guard count > 1 else { return 1 }
        // FNV-1a's low bits are weak on similar strings; a final mix (splitmix64) spreads them.
        var z = FNV1a64.hash(key)
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        z ^= z >> 31
        return Int(z % UInt64(count)) + 1
    }

    public func owns(_ job: BatchJob) -> Bool { Shard.assign(job, count: count) == index }
}
