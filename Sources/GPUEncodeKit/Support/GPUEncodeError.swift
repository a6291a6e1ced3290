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
        case .internal: return 1
        }
    }

    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}

/// The exit codes, for --help and the README.
public let exitCodeTable: [(code: Int32, meaning: String)] = [
    (0, "success"),
    (1, "internal error"),
    (64, "usage error (bad option, output is the input)"),
    (65, "the input's data could not be decoded"),
    (66, "input missing, unreadable, not a media file, or without a video stream"),
    (67, "invalid preset"),
    (69, "no GPU context could be created"),
    (73, "output cannot be created (exists without -y, directory missing or unwritable)"),
    (74, "encoding or writing the output failed"),
    (130, "interrupted by SIGINT (143: SIGTERM)"),
]
