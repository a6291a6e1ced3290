import Foundation

/// One thread that owns the GL context and the decoded frame: GL contexts are current on one thread,
/// and a Swift task may resume on any thread, so the server's handlers hand their work here and
/// await the result. Jobs run one at a time, in order.
final class RenderThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var thread: Thread?

    /// Starts the thread; `setUp` runs on it first (it makes the GL context) and its error is thrown here.
    init<State>(setUp: @escaping () throws -> State) throws where State: AnyObject {
        var made: Result<State, Error>?
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            made = Result { try setUp() }
            state = try? made?.get()
            ready.signal()
            if state == nil { return }
            while true {
                condition.lock()
                while jobs.isEmpty { condition.wait() }
                let job = jobs.removeFirst()
                condition.unlock()
                job()
            }
        }
        // Shader compilation on llvmpipe recurses deeply: the default 512 KiB of a secondary thread is short.
        thread.stackSize = 16 << 20
        thread.name = "gpuencode-studio-gl"
        self.thread = thread
        thread.start()
        ready.wait()
        if case .failure(let error) = made { throw error }
    }

    /// What `setUp` made, touched only on the thread.
    private var state: AnyObject?

    /// Runs `body` with the state on the GL thread and returns its result.
    func run<State: AnyObject, T>(_ type: State.Type, _ body: @escaping (State) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            condition.lock()
            jobs.append { [self] in
                continuation.resume(with: Result { try body(state as! State) })
            }
            condition.signal()
            condition.unlock()
        }
    }
}
