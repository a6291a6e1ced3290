/// Groups the nodes into the programs that run them and splits wherever a program would pass the
/// GPU's limits (uniform storage, samplers) or a later node reads the picture so far: the fused
/// passes take every node; a chain is cut by `ChainPlan` (each sampling filter's passes with the
/// point filters after it, a reduction for a measurement), and the conversion to Y'CbCr is the
/// last program. Throws the preset error of a filter no program of this GPU can hold.
public struct FuseIntoPrograms: GraphPass {
    public let name = "fuse into programs, split at the GPU's limits"
    public let isOptional = false
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        let rendered = graph.renderedFilters
        if case .planeBlur(let sigma, _) = graph.execution {
            // The blur takes its first three passes; the conversions after it are the fourth.
            graph.programs = PlaneBlur.passLines(sigma: sigma)
            for i in graph.nodes.indices where i > 0 && i < graph.nodes.count - 1 {
                graph.nodes[i].program = graph.nodes[i].filter != nil ? 0 : 3
            }
            return
        }
        if graph.execution?.runsOnCPU == true {
            for i in graph.nodes.indices where i > 0 && i < graph.nodes.count - 1 { graph.nodes[i].program = 0 }
            if case .cpuPlaneBlur(let sigma, _) = graph.execution {
                graph.programs = [PlaneBlur.cpuPassLine(sigma: sigma)]
                return
            }
            graph.programs = ["on the CPU: source, \(rendered.map(\.declaration.name).joined(separator: ", ")), to Y'CbCr (no GL program)"]
            return
        }
        guard graph.execution == .chain else {
            for i in graph.nodes.indices where i > 0 && i < graph.nodes.count - 1 { graph.nodes[i].program = 0 }
            if !job.filters.isEmpty { graph.programs = [FrameRenderer.fusedPassLine(job.filters)] }
            return
        }
        var color = job.sourceColor
        color.clamped = !graph.transparent
        let plan = try ChainPlan(filters: rendered, sourceGLSL: FrameRenderer.chainSourceGLSL(color), fuse: job.path != .unfused,
                                 limits: job.limits)
        // Each filter's program: the segment that runs it (the scale's passes are the scale node's).
        var segmentOf: [Int: Int] = [:]
        for (k, segment) in plan.segments.enumerated() {
            var prefixes = segment.points.map(\.0)
            switch segment {
            case .sampling(let p, _, _), .average(let p, _, _): prefixes.append(p)
            default: break
            }
            for p in prefixes { if let i = Int(p.dropFirst().dropLast()) { segmentOf[i] = k } }
        }
        var filterNumber = 0
        var program = 0
        for i in graph.nodes.indices.dropFirst() {
            switch graph.nodes[i].kind {
            case .filter:
                program = segmentOf[filterNumber] ?? program
                filterNumber += 1
            case .scale(_, _, .gpu, let passes):
                program = segmentOf[filterNumber + passes.count - 1] ?? program
                filterNumber += passes.count
            case .toYCbCr:
                program = RenderNode.conversionPass
            case .output:
                continue
            default:
                break
            }
            graph.nodes[i].program = program
        }
        graph.programs = plan.description
        if FrameRenderer.endsInOutputScale(rendered) { graph.programs += ScaledChroma.passLines(after: graph.programs.count) }
    }
}
