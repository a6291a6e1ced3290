/// One named transformation of the render graph (Movit's `finalize()` steps). Required passes make
/// any graph executable (conversions, execution, programs); optional ones only make it cheaper and
/// are left out by `CompileOptions.reference`, which gives the plan they are tested against.
public protocol GraphPass: Sendable {
    /// The name `--passes` prints the graph under.
    var name: String { get }
    var isOptional: Bool { get }
    func run(_ graph: inout RenderGraph, job: RenderJob) throws
}

extension RenderGraph {
    /// Indices of the preset's filter nodes (not the scale), in order.
    var filterIndices: [Int] { nodes.indices.filter { nodes[$0].filter != nil } }

    var scaleIndex: Int? { nodes.firstIndex { $0.isScale } }

    /// Where conversions after the source go: after the source and its rotation.
    var afterSource: Int {
        var i = 1
        while i < nodes.count, case .rotate = nodes[i].kind { i += 1 }
        return i
    }
}
