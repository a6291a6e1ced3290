/// Every failure the tool reports: one line naming the file and the cause, and a distinct exit code.
public struct GPUEncodeError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        case usage
        case inputDecode
        case input
        case preset
        case gpu
        case outputCreate
        case encode
        case interrupted(signal: Int32)
        /// `gpuencode batch`: it ran to the end (or to --fail-fast) and at least one job failed.
        case jobsFailed
        /// `gpuencode report merge`: the shard reports do not add up to the plan (a job missing or twice).
        case reportMismatch
        /// The system refused a resource the run needs (a thread: `ulimit -u`, memory): EX_OSERR.
        case system
        case `internal`
    }

    public let kind: Kind
    public let path: String?
    public let message: String

    public init(_ kind: Kind, path: String? = nil, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// sysexits(3) codes where one fits, so scripts can tell the causes apart.
    public var exitCode: Int32 {
        switch kind {
        case .usage: return 64
        case .inputDecode: return 65
        case .input: return 66
        case .preset: return 67
        case .gpu: return 69
        case .outputCreate: return 73
        case .encode: return 74
        case .interrupted(let signal): return 128 + signal
        case .jobsFailed: return 80
        case .reportMismatch: return 81
        case .system: return 71
        case .internal: return 1
        }
    }

    /// Stopped by a signal (or a batch's stop request) rather than failed.
    public var isInterruption: Bool {
        if case .interrupted = kind { return true }
        return false
    }

    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}

/// The exit codes, for --help and the README.
public let exitCodeTable: [(code: Int32, meaning: String)] = [
    (0, "success"),
    (1, "internal error (an unexpected OpenGL error included)"),
    (64, "usage error (bad option, output is the input, an option a picture output cannot take, a size asked for beyond the largest output: 16384 a side and 8912896 pixels, 4096x2176, for a movie; 67108864, 8192x8192, for a picture)"),
    (65, "the input's data could not be decoded"),
    (66, "input missing, unreadable, not a media file, without a video stream, or a picture smaller than 2x2 or larger than the largest output (16384 a side; 8912896 pixels for a movie, 67108864 for a picture; or the GPU's texture limit)"),
    (67, "invalid preset, or one this GPU cannot run (a shader that does not compile or fit, too many filters or passes)"),
    (69, "no GPU context could be created (or no NVIDIA device for --encoder nvenc / --hwaccel cuda)"),
    (71, "the system refused a resource (a thread could not be started: ulimit -u, memory)"),
    (73, "output cannot be created (exists without -y, directory missing or unwritable)"),
    (74, "encoding or writing the output failed"),
    (80, "batch: some jobs failed (the others ran; see the report)"),
    (81, "report merge: a job is missing or duplicated across the shard reports"),
    (130, "stopped by a signal, 128+N: 130 SIGINT, 143 SIGTERM, 129 SIGHUP, 141 SIGPIPE, 153 SIGXFSZ; nothing is left behind, a batch writes its state and report first"),
]
