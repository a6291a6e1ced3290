import Foundation
import XCTest

/// The command tree as a person meets it: `gpuencode help COMMAND`, help text that reflows at the
/// terminal's width, `--version`, and the completion scripts, each checked by the shell itself.
final class CommandLineTests: GPUEncodeTestCase {
    /// Every command path of the tree, the root first.
    static let commands: [[String]] = [[], ["transcode"], ["batch"], ["contact-sheet"], ["filters"], ["lut"], ["presets"],
                                       ["presets", "list"], ["presets", "show"], ["presets", "upgrade"], ["presets", "schema"],
                                       ["preview"], ["report"], ["report", "merge"], ["studio"], ["validate"]]
    static let topLevel = ["transcode", "batch", "contact-sheet", "filters", "lut", "presets", "preview", "report", "studio", "validate"]

    private func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> ProcessResult {
        try gpuencode(arguments, environment: ProcessInfo.processInfo.environment.merging(extra) { $1 })
    }

    func testHelpCommandNamesEveryCommand() throws {
        for path in Self.commands {
            let viaHelp = try run(["help"] + path, environment: ["COLUMNS": "100"])
            XCTAssertEqual(viaHelp.status, 0, "gpuencode help \(path.joined(separator: " ")): \(viaHelp.summary)")
            let viaFlag = try run(path + ["--help"], environment: ["COLUMNS": "100"])
            XCTAssertEqual(viaFlag.status, 0)
            XCTAssertEqual(viaHelp.stdout, viaFlag.stdout, "help \(path) and \(path) --help print the same text")
            XCTAssertTrue(viaHelp.stdout.contains("USAGE: gpuencode"), "\(path): \(viaHelp.stdout.prefix(200))")
        }
        // The root's help is the transcode's (the default command), and it lists the others.
        let root = try run(["--help"]).stdout
        XCTAssertTrue(root.contains("USAGE: gpuencode <input> <output>"), root)
        for name in Self.topLevel where name != "transcode" { XCTAssertTrue(root.contains("gpuencode \(name)"), "--help names \(name)") }
        XCTAssertEqual(try run(["help"]).stdout, root)
        let unknown = try run(["help", "frobnicate"])
        XCTAssertNotEqual(unknown.status, 0, "help for a command that does not exist fails")
    }

    /// No source line breaks inside a paragraph: at 80 columns each line of prose is as full as
    /// argument-parser's wrapping makes it (the next word would not have fitted), and no line is
    /// longer than the terminal. Tables and examples (indented lines) keep their own breaks.
    func testHelpReflowsAt80Columns() throws {
        for width in [80, 120] {
            for path in Self.commands {
                let lines = try run(["help"] + path, environment: ["COLUMNS": String(width)]).stdout.components(separatedBy: "\n")
                for (a, b) in zip(lines, lines.dropFirst()) {
                    XCTAssertLessThanOrEqual(a.count, width, "gpuencode help \(path.joined(separator: " ")) at \(width): too long: \(a)")
                    guard let first = a.first, let next = b.first, first != " ", !" -*".contains(next), !a.hasSuffix(":") else { continue }
                    let word = b.split(separator: " ").first.map(String.init) ?? b
                    XCTAssertGreaterThan(a.count + 1 + word.count, width - 1,
                                         "gpuencode help \(path.joined(separator: " ")) at \(width): ragged, \"\(word)\" fits after: \(a)")
                }
            }
        }
    }

    /// The version from VERSION, the commit git names, the FFmpeg that ffmpeg's own CLI reports,
    /// and the renderer in use.
    func testVersionNamesReleaseCommitFFmpegAndGL() throws {
        let result = try run(["--version"], environment: ["GPUENCODE_GPU": "software"])
        XCTAssertEqual(result.status, 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, result.stdout)
        let version = try String(contentsOf: Paths.packageRoot.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(lines[0].hasPrefix("gpuencode \(version) (commit "), lines[0])
        // The stamped commit is one git knows, and HEAD or an ancestor of it (HEAD itself in CI; a
        // developer may commit while the suite runs).
        let stamped = try XCTUnwrap(lines[0].split(separator: " ").dropFirst(3).first.map { String($0.dropLast()) })
        let head = try Oracle.run("/usr/bin/env", ["git", "-C", Paths.packageRoot.path, "rev-parse", "HEAD"])
        if head.status == 0 {
            XCTAssertEqual(stamped.count, 12, lines[0])
            let known = try Oracle.run("/usr/bin/env", ["git", "-C", Paths.packageRoot.path, "merge-base", "--is-ancestor", stamped, "HEAD"])
            XCTAssertEqual(known.status, 0, "\(lines[0]): \(stamped) is not HEAD or an ancestor of it")
        }
        // ffmpeg -version prints "libavcodec     59. 37.100 / 59. 37.100": the run-time version after the slash.
        let ffmpeg = try Oracle.runChecked("/usr/bin/env", ["ffmpeg", "-hide_banner", "-version"]).stdout
        for library in ["libavformat", "libavcodec", "libavutil", "libswscale", "libswresample"] {
            let row = try XCTUnwrap(ffmpeg.split(separator: "\n").first { $0.hasPrefix(library + " ") }, library)
            let runtime = row.split(separator: "/").last!.replacingOccurrences(of: " ", with: "")
            XCTAssertTrue(lines[1].contains("\(library) \(runtime)"), "\(lines[1]) has \(library) \(runtime)")
        }
        let release = ffmpeg.split(separator: "\n").first!.split(separator: " ")[2]
        XCTAssertTrue(lines[1].hasPrefix("FFmpeg \(release): "), "\(lines[1]) vs ffmpeg's \(release)")
        XCTAssertTrue(lines[2].hasPrefix("OpenGL: OpenGL ES 3."), lines[2])
        XCTAssertTrue(lines[2].contains("llvmpipe"), lines[2])
        XCTAssertEqual(try run(["--version"]).status, 0)
    }

    /// A machine without a usable GPU still gets its version, and the reason on the GL line.
    func testVersionWithoutGPU() throws {
        let result = try run(["--version"], environment: ["GPUENCODE_GPU": "hardware", "EGL_PLATFORM": "surfaceless",
                                                          "__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent.json"])
        XCTAssertEqual(result.status, 0, result.summary)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, result.stdout)
        XCTAssertTrue(lines[2].hasPrefix("OpenGL: none ("), String(lines[2]))
    }

    // MARK: completion scripts

    private func script(_ shell: String) throws -> URL {
        let result = try run(["--generate-completion-script", shell])
        XCTAssertEqual(result.status, 0, result.summary)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("gpuencode-completion-\(UUID().uuidString).\(shell)")
        try result.stdout.write(to: url, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    private func requireShell(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") { return "\(dir)/\(name)" }
        throw XCTSkip("\(name) is not installed (.ci/install-deps installs it)")
    }

    func testCompletionScriptsParse() throws {
        XCTAssertEqual(try Oracle.run(try requireShell("bash"), ["-n", try script("bash").path]).status, 0, "bash -n")
        XCTAssertEqual(try Oracle.run(try requireShell("zsh"), ["-n", try script("zsh").path]).status, 0, "zsh -n")
        XCTAssertEqual(try Oracle.run(try requireShell("fish"), ["--no-execute", try script("fish").path]).status, 0, "fish --no-execute")
        // Asked for from a subcommand, as argument-parser allows, it is still the whole tree's script.
        let fromBatch = try run(["batch", "--generate-completion-script", "bash"]).stdout
        XCTAssertEqual(fromBatch, try run(["--generate-completion-script", "bash"]).stdout)
        XCTAssertEqual(try run(["--generate-completion-script", "tcsh"]).status, 64, "an unknown shell is a usage error")
    }

    /// What bash offers for each line, through the completion function bash itself would call.
    private func bashCompletions(_ words: [String], in directory: URL) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let program = """
        source '\(try script("bash").path)'
        COMP_WORDS=(\(quoted)); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
        COMPREPLY=(); _gpuencode gpuencode "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
        printf '%s\\n' "${COMPREPLY[@]}"
        """
        let bin = URL(fileURLWithPath: try Paths.gpuencode()).deletingLastPathComponent().path
        let env = ProcessInfo.processInfo.environment.merging(["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"),
                                                               "XDG_CONFIG_HOME": directory.path]) { $1 }
        let result = try Oracle.run(try requireShell("bash"), ["-c", "cd '\(directory.path)' && " + program], environment: env)
        XCTAssertEqual(result.status, 0, result.summary)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    func testBashCompletesCommandsPresetsFilesAndSettingWords() throws {
        let dir = try temporaryDirectory()
        FileManager.default.createFile(atPath: dir.appendingPathComponent("clip.mp4").path, contents: Data())
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("gpuencode/presets"), withIntermediateDirectories: true)
        try #"{"version": 2, "name": "mylook", "filters": [{"filter": "sepia"}]}"#
            .write(to: dir.appendingPathComponent("gpuencode/presets/mylook.json"), atomically: true, encoding: .utf8)

        let first = try bashCompletions(["gpuencode", ""], in: dir)
        for name in Self.topLevel + ["help", "clip.mp4"] { XCTAssertTrue(first.contains(name), "first word offers \(name): \(first)") }
        // The transcode's words without naming it (the default command), and with.
        for line in [["gpuencode", "clip.mp4", "out.mp4", "--preset", ""], ["gpuencode", "--preset", ""],
                     ["gpuencode", "transcode", "clip.mp4", "o.mp4", "--preset", ""], ["gpuencode", "batch", "clips", "--preset", ""],
                     ["gpuencode", "preview", "clip.mp4", "--preset", ""], ["gpuencode", "presets", "show", ""]] {
            let offered = try bashCompletions(line, in: dir)
            for name in ["sepia", "identity", "toaster", "mylook"] { XCTAssertTrue(offered.contains(name), "\(line) offers \(name): \(offered)") }
        }
        XCTAssertEqual(try bashCompletions(["gpuencode", "clip.mp4", "out.mp4", "--preset", "sep"], in: dir), ["sepia"])
        XCTAssertEqual(try bashCompletions(["gpuencode", "cl"], in: dir), ["clip.mp4"])
        // A word that looks like a path completes to folders and preset files, not names.
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("looks"), withIntermediateDirectories: true)
        for file in ["warm.json", "notes.txt"] {
            FileManager.default.createFile(atPath: dir.appendingPathComponent("looks/\(file)").path, contents: Data("{}".utf8))
        }
        XCTAssertEqual(try bashCompletions(["gpuencode", "clip.mp4", "o.mp4", "--preset", "./lo"], in: dir), ["./looks/"])
        XCTAssertEqual(try bashCompletions(["gpuencode", "clip.mp4", "o.mp4", "--preset", "./looks/"], in: dir), ["./looks/warm.json"])
        XCTAssertEqual(Set(try bashCompletions(["gpuencode", "clip.mp4", "o.mp4", "--codec", ""], in: dir)), ["h264", "hevc", "av1"])
        XCTAssertEqual(Set(try bashCompletions(["gpuencode", "batch", "--audio", ""], in: dir)), ["auto", "copy", "aac", "opus", "none"])
        XCTAssertEqual(Set(try bashCompletions(["gpuencode", "--gpu", ""], in: dir)), ["auto", "hardware", "software"])
        XCTAssertTrue(try bashCompletions(["gpuencode", "clip.mp4", "o.mp4", "--sp"], in: dir).contains("--speed"))
        XCTAssertTrue(try bashCompletions(["gpuencode", "batch", "--shard-"], in: dir).contains("--shard-count"))
        XCTAssertEqual(try bashCompletions(["gpuencode", "presets", ""], in: dir).filter { !$0.hasPrefix("-") }.sorted(),
                       ["list", "schema", "show", "upgrade"])
    }

    func testFishCompletesTheDefaultCommand() throws {
        let fish = try requireShell("fish")
        let dir = try temporaryDirectory()
        FileManager.default.createFile(atPath: dir.appendingPathComponent("clip.mp4").path, contents: Data())
        let path = try script("fish").path
        let bin = URL(fileURLWithPath: try Paths.gpuencode()).deletingLastPathComponent().path
        let env = ProcessInfo.processInfo.environment.merging(["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin")]) { $1 }
        func offered(_ line: String) throws -> [String] {
            let result = try Oracle.run(fish, ["-c", "cd '\(dir.path)'; source '\(path)'; complete -C '\(line)'"], environment: env)
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        let first = try offered("gpuencode ")
        for name in Self.topLevel + ["clip.mp4"] { XCTAssertTrue(first.contains(name), "fish offers \(name): \(first)") }
        XCTAssertTrue(try offered("gpuencode clip.mp4 out.mp4 --pre").contains("--preset"))
        XCTAssertEqual(Set(try offered("gpuencode clip.mp4 out.mp4 --codec ")), ["h264", "hevc", "av1"])
        XCTAssertTrue(try offered("gpuencode batch --sh").contains("--shard-count"))
    }

    /// zsh completes only in an interactive shell, so one runs under zpty: the line is typed with a
    /// Tab, and the buffer zsh made of it is read back.
    func testZshCompletesTheDefaultCommand() throws {
        let zsh = try requireShell("zsh")
        let dir = try temporaryDirectory()
        FileManager.default.createFile(atPath: dir.appendingPathComponent("clip.mp4").path, contents: Data())
        let completion = try script("zsh").path
        let driver = dir.appendingPathComponent("drive.zsh")
        try """
        zmodload zsh/zpty
        zpty z 'zsh -f -i'
        zpty -w z 'PS1="%% "; autoload -Uz compinit; compinit -u -D; source \(completion); setopt nobeep'
        sleep 1
        zpty -w -n z $1$'\t'
        sleep 1.5
        zpty -w -n z $'\\C-e echo TYPED\\n'
        sleep 0.5
        out=""
        while zpty -r -t z chunk; do out+=$chunk; done
        zpty -d z
        print -r -- "$out"
        """.write(to: driver, atomically: true, encoding: .utf8)
        let bin = URL(fileURLWithPath: try Paths.gpuencode()).deletingLastPathComponent().path
        let env = ProcessInfo.processInfo.environment.merging(["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"),
                                                               "HOME": dir.path, "XDG_CONFIG_HOME": dir.path]) { $1 }
        func completed(_ line: String) throws -> String {
            let result = try Oracle.run("/bin/sh", ["-c", "cd '\(dir.path)' && exec '\(zsh)' '\(driver.path)' \"$0\"", line], timeout: 60, environment: env)
            // The echoed command line: what zsh's completion made of the typed words.
            let typed = result.stdout.components(separatedBy: "\n").last { $0.contains("echo TYPED") } ?? ""
            let clean = typed.replacingOccurrences(of: "\u{1b}\\[[0-9;?]*[a-zA-Z]", with: "", options: .regularExpression)
                .replacingOccurrences(of: "\r", with: "")
            guard let end = clean.range(of: " echo TYPED") else { return clean }
            let before = clean[..<end.lowerBound]
            // The prompt "% ", then the line as zle echoes it (its first letter twice: once as typed,
            // once redrawn).
            guard let start = before.range(of: "% g", options: .backwards) else { return String(before) }
            return String(before[start.upperBound...]).trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(.controlCharacters))
        }
        XCTAssertEqual(try completed("gpuencode clip.mp4 out.mp4 --preset sep"), "gpuencode clip.mp4 out.mp4 --preset sepia")
        XCTAssertEqual(try completed("gpuencode --codec he"), "gpuencode --codec hevc")
        XCTAssertEqual(try completed("gpuencode cl"), "gpuencode clip.mp4")
        XCTAssertEqual(try completed("gpuencode bat"), "gpuencode batch")
        XCTAssertEqual(try completed("gpuencode batch --audio co"), "gpuencode batch --audio copy")
    }

    private func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("gpuencode-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }
}
