import GPUEncodeCore
import Glibc

/// Whether `batch` reports its errors as JSON events: `--progress json`, or `auto` off a terminal, as
/// its display decides once parsed (ProgressOptions.style). Read from the words before parsing, so a
/// usage error in a JSON stream is JSON too: a script piping the batch's stderr into `jq` reads every
/// line, a mistyped option included.
func batchErrorsAreJSON(_ arguments: [String]) -> Bool {
    guard commandPath(arguments) == "gpuencode batch" else { return false }
    let words = Array(arguments.prefix { $0 != "--" })
    var asked: String?
    for (i, word) in words.enumerated() {
        if word == "--progress", i + 1 < words.count { asked = words[i + 1] }
        if word.hasPrefix("--progress=") { asked = String(word.dropFirst("--progress=".count)) }
    }
    if asked == "json" { return true }
    guard asked == nil || asked == "auto" else { return false }
    // -q, --no-progress and a progress stream on stderr make auto quiet: errors stay plain lines.
    if words.contains("-q") || words.contains("--quiet") || words.contains("--no-progress") || words.contains("pipe:2") { return false }
    return isatty(2) != 1
}

/// A batch-level `error` event, as BatchProgress writes one (its clock starts with the batch, which
/// has not started: t is 0).
func batchErrorEvent(_ text: String, exitCode: Int32) -> String {
    compactJSON(.obj([("t", .num(0)), ("event", .str("error")), ("message", .str(text)), ("exitCode", .int(Int(exitCode)))]))
}
