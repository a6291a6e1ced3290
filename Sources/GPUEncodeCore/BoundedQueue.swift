import Glibc

/// A blocking FIFO with a fixed capacity: the stages of the pipeline hand frames through these,
/// so frames in flight (and memory) stay constant whatever the length of the input.
package final class BoundedQueue<Element>: @unchecked Sendable {
    /// Popped slots are set to nil at once: a slot kept its element until the array was compacted
    /// (every 64 pops), and with frames as elements that held up to 64 decoded and 64 filtered
    /// 1080p frames alive (about 400 MB of peak RSS).
    private var items: [Element?] = []
    private var head = 0
    private let capacity: Int
    private var closed = false
    private var mutex = pthread_mutex_t()
    private var notEmpty = pthread_cond_t()
    private var notFull = pthread_cond_t()
    /// The most items ever held at once; tests read it to prove the bound.
    private(set) var highWaterMark = 0

    package init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&notEmpty, nil)
        pthread_cond_init(&notFull, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
        pthread_cond_destroy(&notEmpty)
        pthread_cond_destroy(&notFull)
    }

    private var count: Int { items.count - head }

    /// Blocks while full. Returns false (and drops nothing into the queue) once closed.
    @discardableResult
    package func push(_ item: Element) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while count >= capacity && !closed { pthread_cond_wait(&notFull, &mutex) }
        if closed { return false }
        items.append(item)
        highWaterMark = max(highWaterMark, count)
        pthread_cond_signal(&notEmpty)
        return true
    }

    /// Blocks while empty. Returns nil when closed and drained.
    package func pop() -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while count == 0 && !closed { pthread_cond_wait(&notEmpty, &mutex) }
        if count == 0 { return nil }
        let item = items[head]!
        items[head] = nil
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        pthread_cond_signal(&notFull)
        return item
    }

    /// No more pushes; consumers drain what is left, producers blocked in push return false.
    package func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&notEmpty)
        pthread_cond_broadcast(&notFull)
        pthread_mutex_unlock(&mutex)
    }

    /// Removes everything left (after an abort), handing each item to `body` for release.
    package func drain(_ body: (Element) -> Void) {
        pthread_mutex_lock(&mutex)
        let rest = items[head...].compactMap { $0 }
        items = []
        head = 0
        pthread_cond_broadcast(&notFull)
        pthread_mutex_unlock(&mutex)
        rest.forEach(body)
    }
}

/// A joinable POSIX thread running one closure.
package final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let body: () -> Void

    /// Throws (one line, exit 1) when the system refuses another thread (the process or user
    /// thread limit, ulimit -u, or no memory for its stack) instead of trapping. `stackSize`
    /// (bytes) overrides the default; tests use an impossible one to make pthread_create fail.
    package init(name: String, stackSize: Int? = nil, _ body: @escaping () -> Void) throws {
        self.body = body
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let unmanaged = Unmanaged.passRetained(self)
        let rc = pthread_create(&thread, &attributes, { arg in
            let worker = Unmanaged<WorkerThread>.fromOpaque(arg!).takeRetainedValue()
            worker.body()
            return nil
        }, unmanaged.toOpaque())
        guard rc == 0 else {
            unmanaged.release()
            throw GPUEncodeError(.system, "cannot start a thread (\(name)): \(errnoString(rc)); the process or user thread limit (ulimit -u) or memory is exhausted")
        }
    }

    package func join() {
        pthread_join(thread, nil)
    }
}

/// A mutex-protected value for state the stages share (first error, counters).
package final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private var mutex = pthread_mutex_t()

    package init(_ value: Value) {
        self.value = value
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(&value)
    }
}
