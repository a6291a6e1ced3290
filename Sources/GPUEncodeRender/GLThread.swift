import GPUEncodeCore

/// One GL context on a thread of its own that renders for others, one job at a time: GL contexts
/// are current on one thread, so work for this one from elsewhere is handed to its thread.
///
/// Why one context for many transcodes (a batch on a hardware GPU): on NVIDIA's driver a process
/// whose many threads each drive a context of their own stops gaining past about 4 of them, and
/// making contexts is serialised across the machine (about 63 ms each when 16 are made at once on
/// the H100; docs/PERFORMANCE.md, "Batch again"). The GL work of a frame is a fraction of a
/// millisecond there, so one thread serves a whole batch. Renderers that share the context keep
/// nothing bound from one job to the next that another would disturb: each binds its programs,
/// targets, textures and buffers when it draws or reads.
public final class GLThread: @unchecked Sendable {
    /// The context's GL_RENDERER, version and platform, and whether it is software (llvmpipe).
    public let renderer: String
    public let version: String
    public let platform: String
    public let isSoftware: Bool
    private let thread: SerialThread
    /// Made, used and let go on `thread` only.
    private var context: GLContext?

    /// Starts the thread and makes the context there; a failure to make either is thrown here.
    public init(selection: GPUSelection) throws {
        thread = try SerialThread(name: "gpuencode-gl-shared")
        let made = try thread.sync { try GLContext(selection: selection) }
        renderer = made.renderer
        version = made.version
        platform = made.platform
        isSoftware = made.isSoftware
        context = made
    }

    deinit {
        try? thread.sync { [self] in context = nil }
        thread.stop()
    }

    /// Runs `body` on the context's thread and waits for it; its error is rethrown here.
    public func sync<T>(_ body: (GLContext) throws -> T) throws -> T {
        try thread.sync { [self] in try body(context!) }
    }
}
