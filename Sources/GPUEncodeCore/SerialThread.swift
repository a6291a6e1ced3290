import Dispatch
import Foundation

/// One thread that runs the jobs handed to it, one at a time, in the order given: for state that
/// must stay on one thread (a GL context is current on one thread only) but is used from many (a
/// batch's transcodes, a server's requests).
package final class SerialThread: @unchecked Sendable {
    /// A job's work and what tells its caller it is done, run after the work is let go: a caller's
    /// non-escaping closure must not outlive the call (`sync`).
    private struct Job {
        var work: () -> Void
        var done: (() -> Void)?
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopped = false
    private var worker: WorkerThread?

    /// Starts the thread (a failure to start one is thrown, one line). `stackSize`: bytes; shader
    /// compilation on llvmpipe recurses deeply, more than a secondary thread's default 512 KiB.
    package init(name: String, stackSize: Int = 16 << 20) throws {
        worker = try WorkerThread(name: name, stackSize: stackSize) { [self] in serve() }
    }

    /// Ends the thread once the jobs already given are done (then `sync` and `run` must not be called).
    package func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        worker?.join()
        worker = nil
    }

    /// Runs `body` on the thread and waits for it; its error is rethrown here.
    package func sync<T>(_ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            var result: Result<T, Error>?
            let finished = DispatchSemaphore(value: 0)
            add(Job(work: { result = Result { try body() } }, done: { finished.signal() }))
            finished.wait()
            return try result!.get()
        }
    }

    /// Runs `body` on the thread without holding the caller's thread (for Swift tasks).
    package func run<T>(_ body: @escaping () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            add(Job(work: { continuation.resume(with: Result { try body() }) }, done: nil))
        }
    }

    private func add(_ job: Job) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            var job: Job? = jobs.removeFirst()
            condition.unlock()
            job!.work()
            let done = job!.done
            job = nil
            done?()
        }
    }
}
