import ArgumentParser
import CShim
import GPUEncodeBatch
import GPUEncodeKit
import Glibc

/// The command tree. `gpuencode IN OUT` is the default subcommand, `transcode` (as `ffmpeg -i IN OUT`
/// has no verb); the other commands are named by their first word, so an input file named like a
/// command is given as ./NAME. Being one tree is what lets `gpuencode help batch`, the completion
/// scripts and the manual pages cover every command.
struct GPUEncode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gpuencode",
        abstract: "Re-encode movies through a GPU filter chain, keeping their audio, timing and orientation.",
        discussion: """
        `gpuencode IN OUT [options]` is the transcode command (`gpuencode transcode`, the default): \
        it decodes IN with FFmpeg, runs every frame through the preset's filters on the GPU (OpenGL ES 3 \
        on headless EGL: NVIDIA's driver where there is one, Mesa's llvmpipe elsewhere) and writes OUT. \
        The other commands list and check filters and presets, preview a frame, transcode many files \
        (batch) and merge batch reports. `gpuencode help COMMAND` (or `gpuencode COMMAND --help`) \
        explains each one; `gpuencode --help` shows the transcode's options.
        """,
        version: GPUEncodeVersion.string,
        subcommands: [TranscodeCommand.self, BatchCommand.self, ContactSheetCommand.self, FiltersCommand.self, LutCommand.self,
                      PresetsCommand.self, PreviewCommand.self, ReportCommand.self, StudioCommand.self, ValidateCommand.self],
        defaultSubcommand: TranscodeCommand.self
    )
}

/// Runs the command the arguments name. Usage errors are one line, like every other failure, naming
/// the --help that has the full text.
func runCommand(_ arguments: [String]) -> Never {
    do {
        var command = try GPUEncode.parseAsRoot(arguments)
        try command.run()
        exit(0)
    } catch let code as ExitCode {
        exit(code.rawValue)
    } catch {
        let code = GPUEncode.exitCode(for: error)
        if code == .success { GPUEncode.exit(withError: error) }
        let message = GPUEncode.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
        let text = message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message
        if batchErrorsAreJSON(arguments) {
            fputs(batchErrorEvent("\(text) (see gpuencode batch --help)", exitCode: code.rawValue) + "\n", stderr)
            exit(code.rawValue)
        }
        fputs("gpuencode: error: \(text) (see \(commandPath(arguments)) --help)\n", stderr)
        if wantsTranscodeDocument(arguments) {
            // --json promises a document on stdout for every failure, usage errors included.
            let report = TranscodeReport(input: nil, output: nil, dryRun: arguments.contains("--dry-run"))
            print(JSONWriter.write(report.document(status: "failed", exitCode: code.rawValue, error: text)), terminator: "")
        }
        exit(code.rawValue)
    }
}

/// "gpuencode", "gpuencode batch" or "gpuencode presets show": the command the arguments name.
func commandPath(_ arguments: [String]) -> String {
    var path = ["gpuencode"]
    var children = GPUEncode.configuration.subcommands
    for word in arguments {
        guard let next = children.first(where: { $0._commandName == word }) else { break }
        path.append(word)
        children = next.configuration.subcommands
    }
    return path.joined(separator: " ")
}

/// The shell `--generate-completion-script [SHELL]` asks for (anywhere on the line, as
/// argument-parser allows); nil when it is not asked for or names no shell it knows, which
/// argument-parser then reports.
func completionShell(_ arguments: [String]) -> CompletionShell? {
    for (i, word) in arguments.enumerated() {
        if word.hasPrefix("--generate-completion-script=") {
            return CompletionShell(rawValue: String(word.dropFirst("--generate-completion-script=".count)))
        }
        if word == "--generate-completion-script" {
            return i + 1 < arguments.count ? CompletionShell(rawValue: arguments[i + 1]) : CompletionShell.autodetected()
        }
    }
    return nil
}

/// In `gpuencode help WORD...`, the first word that names no command (nil: all do).
func unknownHelpTopic(_ arguments: [String]) -> String? {
    guard arguments.first == "help" else { return nil }
    let words = Array(arguments.dropFirst())
    let known = commandPath(words).split(separator: " ").count - 1
    guard known < words.count, !words[known].hasPrefix("-") else { return nil }
    return words[known]
}

// Swift decodes argv as UTF-8 and replaces invalid bytes with U+FFFD, so a file name that is not
// UTF-8 would silently become another file's name (an output written beside the one asked for).
for i in 1..<Int(CommandLine.argc) {
    if let raw = CommandLine.unsafeArgv[i], String(validatingCString: raw) == nil {
        fputs("gpuencode: error: argument \(i) is not valid UTF-8; rename the file (gpuencode reads and writes UTF-8 names only)\n", stderr)
        exit(64)
    }
}

// The filters that read pictures and movies (image, lookup, video) decode them with FFmpeg.
FilterMedia.install(FFmpegFilterMedia())

let arguments = rewriteLegacyProgressFlag(Array(CommandLine.arguments.dropFirst()))
switch arguments {
case ["--help"], ["-h"], ["-help"], ["help"]:
    // The transcode is what `gpuencode` does, so its options are the help (as `ffmpeg -h` shows the
    // main options); its text lists the other commands.
    print(GPUEncode.helpMessage(for: TranscodeCommand.self))
    exit(0)
case ["--version"], ["-version"]:
    print(versionReport())
    exit(0)
default:
    break
}
if let mistake = ffmpegPresetMistake(arguments) {
    // ffmpeg's -preset is the encoder's speed; here --preset is the look. Said before parsing, which
    // would only suggest --preset, the wrong option.
    if batchErrorsAreJSON(arguments) {
        fputs(batchErrorEvent("\(mistake) (see gpuencode batch --help)", exitCode: 64) + "\n", stderr)
        exit(64)
    }
    fputs("gpuencode: error: \(mistake) (see \(commandPath(arguments)) --help)\n", stderr)
    if wantsTranscodeDocument(arguments) {
        print(JSONWriter.write(TranscodeReport(input: nil, output: nil, dryRun: arguments.contains("--dry-run"))
            .document(status: "failed", exitCode: 64, error: mistake)), terminator: "")
    }
    exit(64)
}
if let unknown = unknownHelpTopic(arguments) {
    // argument-parser answers `help NOSUCH` with the root's help and 0; a typo should say so.
    fputs("gpuencode: error: no command named '\(unknown)' (gpuencode --help lists the commands)\n", stderr)
    exit(64)
}
if let shell = completionShell(arguments) {
    do {
        print(try CompletionScripts.script(for: shell))
        exit(0)
    } catch let error as GPUEncodeError {
        fputs("gpuencode: error: \(error.description)\n", stderr)
        exit(error.exitCode)
    }
}
runCommand(arguments)
