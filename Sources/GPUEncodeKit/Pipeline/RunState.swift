import CShim

/// How a transcode is going, shared by its threads: the first failure, and the stop requests
/// polled on the way (SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGXFSZ, or `shouldStop` for a batch). The
/// first failure stops every stage: what registered with `onFailure` (the pipeline's queues) is
/// closed, so a stage blocked on a queue wakes up, and each stage drains and frees what it holds.
final class RunState: @unchecked Sendable {
    private let failure = Locked<GPUEncodeError?>(nil)
    private let stops = Locked<[() -> Void]>([])
    /// The output, named in the interruption's message.
    private let output: String
    private let shouldStop: (@Sendable () -> Bool)?

    init(output: String, shouldStop: (@Sendable () -> Bool)?) {
        self.output = output
        self.shouldStop = shouldStop
    }

    var failed: Bool { failure.withLock { $0 != nil } }

    /// Records `error` and stops the stages. The first failure is the one reported, except that a
    /// signal wins over the error it may have caused (SIGXFSZ comes with EFBIG, SIGPIPE with EPIPE):
    /// the exit status is then 128+signal, as with the default action.
    func fail(_ error: Error) {
        let error = error as? GPUEncodeError ?? GPUEncodeError(.internal, "\(error)")
        failure.withLock { current in
            if current == nil || (error.isInterruption && !(current?.isInterruption ?? false)) { current = error }
        }
        for stop in stops.withLock({ $0 }) { stop() }
    }

    /// Fails the run when a signal arrived or the caller asked it to stop.
    func checkInterrupt() {
        let sig = gpuencode_interrupt_signal()
        if sig != 0 { fail(GPUEncodeError(.interrupted(signal: sig), path: output, "interrupted by \(signalName(sig)); no output written")) }
        else if shouldStop?() == true { fail(GPUEncodeError(.interrupted(signal: 0), path: output, "stopped; no output written")) }
    }

    /// Runs `stop` on the first failure (at once if the run has failed already).
    func onFailure(_ stop: @escaping () -> Void) {
        stops.withLock { $0.append(stop) }
        if failed { stop() }
    }

    func throwIfFailed() throws {
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
