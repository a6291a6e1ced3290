/// Compiles a job into the graph the renderer executes: the first graph (`RenderGraph(job:)`), then
/// each pass in order; the optional ones only when `CompileOptions.optionalPasses` is on. Keeps the
/// graph after every pass (`--passes` prints them), so what each pass did can be read and tested.
public struct RenderCompiler: Sendable {
    public var options: CompileOptions

    public init(options: CompileOptions = CompileOptions()) {
        self.options = options
    }

    /// Every pass, in the order they run.
    public static let passes: [any GraphPass] = [
        DropIdentity(),
        ScaleFirstPass(),
        InsertConversions(),
        ChooseExecution(),
        ChoosePlanes(),
        BlurOnPlanes(),
        RunOnCPU(),
        BakeColour(),
        FuseIntoPrograms(),
    ]

    public struct Result: Sendable {
        public var graph: RenderGraph
        /// The graph as the job made it, then after each pass that ran: (pass name, graph).
        public var trace: [(pass: String, graph: RenderGraph)]

        /// What `--passes` prints.
        public var traceText: [String] {
            trace.flatMap { ["\($0.pass):"] + $0.graph.description.split(separator: "\n").map(String.init) }
        }
    }

    public func compile(_ job: RenderJob) throws -> Result {
        var job = job
        job.cpuKernels = job.cpuKernels && options.cpuKernels
        var graph = RenderGraph(job: job)
        var trace = [(pass: "the job", graph: graph)]
        for pass in RenderCompiler.passes where options.optionalPasses || !pass.isOptional {
            try pass.run(&graph, job: job)
            trace.append((pass.name + (pass.isOptional ? " (optional)" : ""), graph))
        }
        return Result(graph: graph, trace: trace)
    }
}
