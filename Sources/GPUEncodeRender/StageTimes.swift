import CEGL
import GPUEncodeCore

/// Where a frame's time goes, stage by stage, for `--benchmark-filters` (bench/h100.sh): the GPU's
/// time from GL timer queries (GL_EXT_disjoint_timer_query) around each stage's commands, and the
/// CPU's time spent in the calls. Measured on frames rendered one at a time, so the stages do not
/// overlap and each one's GPU time is its own.
public final class StageTimes {
    public enum Stage: Int, CaseIterable, Sendable {
        /// CPU: copy into mapped buffers (or client memory); GPU: the copies into textures.
        case upload
        /// The filter chain and the conversion to the output's planes.
        case draw
        /// GPU: the copies out of the render targets, queued.
        case readback
        /// CPU: waiting for the readback and copying it into the output frame.
        case collect
    }

    /// Whether the GPU's times are measured (the context lists the timer query extension).
    public let measuresGPU: Bool
    /// Total seconds per stage over `frames`.
    public private(set) var gpu = [Double](repeating: 0, count: Stage.allCases.count)
    public private(set) var cpu = [Double](repeating: 0, count: Stage.allCases.count)
    public private(set) var frames = 0
    private var queries = [GLuint](repeating: 0, count: Stage.allCases.count)
    private var started: Double = 0

    /// On the current context.
    public init() {
        measuresGPU = GLContext.hasExtension("GL_EXT_disjoint_timer_query")
        if measuresGPU { glGenQueries(GLsizei(queries.count), &queries) }
    }

    deinit {
        if measuresGPU { glDeleteQueries(GLsizei(queries.count), queries) }
    }

    func begin(_ stage: Stage) {
        if measuresGPU { glBeginQuery(GLenum(GL_TIME_ELAPSED_EXT), queries[stage.rawValue]) }
        started = monotonicSeconds()
    }

    func end(_ stage: Stage) {
        cpu[stage.rawValue] += monotonicSeconds() - started
        if measuresGPU { glEndQuery(GLenum(GL_TIME_ELAPSED_EXT)) }
    }

    /// After a frame: waits for its queries' results and adds them up.
    func endFrame() {
        frames += 1
        guard measuresGPU else { return }
        for (i, q) in queries.enumerated() {
            var ns: GLuint = 0
            glGetQueryObjectuiv(q, GLenum(GL_QUERY_RESULT), &ns)
            gpu[i] += Double(ns) * 1e-9
        }
    }

    /// "upload gpu 0.120 cpu 0.210 ms, draw …": milliseconds per frame.
    public var summary: String {
        let n = Double(max(frames, 1))
        return Stage.allCases.map { s in
            let g = measuresGPU ? "gpu \(format(gpu[s.rawValue] / n * 1000, 3)) " : ""
            return "\(s) \(g)cpu \(format(cpu[s.rawValue] / n * 1000, 3)) ms"
        }.joined(separator: ", ")
    }
}
