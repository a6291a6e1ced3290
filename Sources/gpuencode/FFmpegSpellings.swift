import GPUEncodeKit

// ffmpeg habits the argument parser cannot meet by itself. ffmpeg's single-dash spellings that are
// the same setting here (`-c:v`, `-b:v`, `-g`, `-an`) are names of the settings themselves
// (EncodeSetting.all's flags, made argument-parser names in EncodeOptions.swift); what follows is
// for spellings that mean something else here.

/// The error line for ffmpeg's `-preset NAME` (x264's speed) on a transcode or batch command line,
/// nil when there is none. Here `--preset` is the look (the filters) and `--speed` the encoder's
/// speed, so the parser's "did you mean --preset?" would send an ffmpeg user to the wrong option.
func ffmpegPresetMistake(_ arguments: [String]) -> String? {
    let path = commandPath(arguments)
    guard path == "gpuencode" || path == "gpuencode transcode" || path == "gpuencode batch" else { return nil }
    for (i, word) in arguments.enumerated() {
        if word == "--" { return nil }
        guard word == "-preset" || word.hasPrefix("-preset=") || word == "-preset:v" else { continue }
        let value = word.hasPrefix("-preset=") ? String(word.dropFirst("-preset=".count)) : (i + 1 < arguments.count ? arguments[i + 1] : "")
        if EncoderSettings.speeds.contains(value) {
            return "-preset \(value) is ffmpeg's encoder speed: here --preset is the look (the filters) and --speed \(value) sets the encoder speed"
        }
        return "\(word) is not an option: --preset (two dashes) names the look (the filters), --speed the encoder speed (ffmpeg's -preset: \(EncoderSettings.speeds.joined(separator: ", ")))"
    }
    return nil
}

/// Whether a failure must also be a `--json` document on stdout: a transcode command line with --json.
func wantsTranscodeDocument(_ arguments: [String]) -> Bool {
    let path = commandPath(arguments)
    guard path == "gpuencode" || path == "gpuencode transcode" else { return false }
    let words = arguments.prefix { $0 != "--" }
    return words.contains("--json")
}
