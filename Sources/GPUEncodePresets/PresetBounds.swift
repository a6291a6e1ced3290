import GPUEncodeCore

/// How big a preset may be. Each filter costs at least one shader to compile before the first frame
/// and a graph node read later keeps a full-size picture for the whole frame, so an unbounded
/// preset runs out of memory or time long before it fails in any useful way (3,000 smoothToon
/// filters reached 4.7 GB before the first frame). The bound is far above any preset anyone writes
/// by hand (the built-ins have at most a dozen filters) and is told at the first step past it, with
/// its line:column, by the reader: so `gpuencode validate` and the run refuse the same presets.
extension PresetReader {
    /// Steps of a `filters` chain (filters and `{"node": NAME}` steps), or nodes of a `graph`.
    public static let maxSteps = 256

    /// True when `items` (a chain's steps) are within the bound; otherwise records the error.
    func withinChainBound(_ items: [JSONValue]) -> Bool {
        guard items.count > Self.maxSteps else { return true }
        errors.append(fail(items[Self.maxSteps], "filters[\(Self.maxSteps)]",
                           "a chain has at most \(Self.maxSteps) steps, this one has \(items.count)"))
        return false
    }

    /// True when a graph's nodes are within the bound; otherwise records the error.
    func withinGraphBound(_ nodes: [(key: String, value: JSONValue)]) -> Bool {
        guard nodes.count > Self.maxSteps else { return true }
        let first = nodes[Self.maxSteps]
        errors.append(fail(first.value, "graph.nodes.\(first.key)",
                           "a graph has at most \(Self.maxSteps) nodes, this one has \(nodes.count)"))
        return false
    }
}
