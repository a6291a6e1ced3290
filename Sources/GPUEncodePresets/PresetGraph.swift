import GPUEncodeCore
import GPUEncodeFilters

/// The general form of a preset: named nodes, each a filter with its inputs, and the node whose
/// picture is the result.
///
///     "graph": {
///       "nodes": {
///         "blurred": {"filter": "gaussianBlur", "sigma": 4, "inputs": ["source"]},
///         "mix": {"filter": "screen", "inputs": ["source", "blurred"]}
///       },
///       "output": "mix"
///     }
///
/// It is compiled into the chain the renderer runs: the nodes the output depends on, in an order
/// where every node comes after its inputs (a node's second input first, then its first, so a node
/// mostly follows its first input directly); where a node's first input is not the step just
/// before it, a restart (`{"node": NAME}`) brings that node's picture back. Every node keeps its
/// name as its id, so later steps can read it.
extension PresetReader {
    struct GraphNode {
        enum Input {
            case node(String, JSONValue)
            case inline(JSONValue, path: String)
        }
        let name: String
        let value: JSONValue
        let path: String
        var inputs: [Input] = []
    }

    static let graphMembers = ["nodes", "output"]

    /// How many inputs a filter takes: blends 2 (the base and the picture blended over it),
    /// generators 0 or 1 (they ignore it), every other filter 1.
    static func inputCount(_ d: FilterDeclaration) -> ClosedRange<Int> {
        if case .blend = d.kind { return 2...2 }
        if d.category == .generator { return 0...1 }
        return 1...1
    }

    func graphElements(_ g: JSONValue) -> [ChainElement]? {
        let before = errors.count
        guard let top = attempt({ try members(g, "graph") }) else { return nil }
        for (key, v) in top where !Self.graphMembers.contains(key) {
            errors.append(fail(v, "graph.\(key)", "unknown member\(hint(key, Self.graphMembers)); a graph has \"nodes\" and \"output\""))
        }
        guard let nodesValue = g["nodes"] else {
            errors.append(fail(g, "graph", "missing \"nodes\" (an object of named filters, each with \"inputs\")"))
            return nil
        }
        guard let list = attempt({ try members(nodesValue, "graph.nodes") }) else { return nil }
        guard !list.isEmpty else {
            errors.append(fail(nodesValue, "graph.nodes", "a graph needs at least one node"))
            return nil
        }
        guard withinGraphBound(list) else { return nil }
        let names = list.map(\.key)
        let known = Set(names)
        let inputNames = ["source"] + names
        var nodes: [String: GraphNode] = [:]
        for (name, value) in list {
            let path = "graph.nodes.\(name)"
            if !Self.isIdentifier(name) || name == "source" {
                errors.append(fail(value, path, "a node name is a word such as \"blurred\" (letters, digits, _ and -; \"source\" is the graph's input)"))
            }
            var node = GraphNode(name: name, value: value, path: path)
            guard case .object = value.kind else {
                errors.append(fail(value, path, "expected a filter object such as {\"filter\": \"sepia\", \"inputs\": [\"source\"]}, found \(value.typeName)"))
                continue
            }
            guard let inputs = value["inputs"] else {
                errors.append(fail(value, path, "missing \"inputs\" (e.g. [\"source\"], or [\"source\", \"blurred\"] for a blend)"))
                continue
            }
            guard case .array(let items) = inputs.kind else {
                errors.append(fail(inputs, path + ".inputs", "expected an array of inputs (\"source\" or node names), found \(inputs.typeName)"))
                continue
            }
            for (i, item) in items.enumerated() {
                let p = "\(path).inputs[\(i)]"
                if case .string(let s) = item.kind, Self.isIdentifier(s) {
                    if s == "source" || known.contains(s) {
                        node.inputs.append(.node(s, item))
                    } else {
                        errors.append(fail(item, p, "no node named \"\(s)\"\(hint(s, inputNames)); an input is \"source\" or one of \(listed(names))"))
                    }
                } else if i == 0 {
                    errors.append(fail(item, p, "the first input is \"source\" or a node name; colours, images and generators can only be a blend's second input"))
                } else {
                    node.inputs.append(.inline(item, path: p))
                }
            }
            if case .string(let filterName)? = value["filter"]?.kind, let d = FilterRegistry.named(filterName) {
                let range = Self.inputCount(d)
                if !range.contains(items.count) {
                    let what: String
                    if case .blend = d.kind {
                        what = "\(d.name) is a blend and takes 2 inputs (the base, then the picture blended over it)"
                    } else if d.category == .generator {
                        what = "\(d.name) is a generator and takes no input (or one, which it ignores)"
                    } else {
                        what = "\(d.name) takes 1 input"
                    }
                    errors.append(fail(inputs, path + ".inputs", "\(what), found \(items.count)"))
                }
            }
            nodes[name] = node
        }

        var outputName: String? = nil
        if let out = g["output"] {
            if let s = attempt({ try string(out, "graph.output") }) {
                if known.contains(s) { outputName = s } else {
                    errors.append(fail(out, "graph.output", "no node named \"\(s)\"\(hint(s, names)); the output is one of \(listed(names))"))
                }
            }
        } else {
            errors.append(fail(g, "graph", "missing \"output\" (the name of the node whose picture is the result)"))
        }

        // Cycles: a depth-first walk along the inputs; meeting a node still on the stack closes one.
        // The walk keeps its own stack rather than recursing: a chain of 100,000 nodes would
        // overflow the thread's.
        var state: [String: Int] = [:]   // 1 on the stack, 2 done
        var reported: Set<[String]> = []
        func walk(_ root: String) {
            guard nodes[root] != nil else { return }
            var stack: [(name: String, next: Int)] = [(root, 0)]
            state[root] = 1
            while let top = stack.last {
                let inputs = nodes[top.name]!.inputs
                guard top.next < inputs.count else {
                    state[top.name] = 2
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                guard case .node(let next, _) = inputs[top.next], next != "source", nodes[next] != nil else { continue }
                if state[next] == 1 {
                    let names = stack.map(\.name)
                    let cycle = Array(names[names.lastIndex(of: next)!...]) + [next]
                    if reported.insert(cycle.dropLast().sorted()).inserted {
                        let at = nodes[next]!
                        errors.append(fail(at.value, at.path, "the graph has a cycle: \(cycle.joined(separator: " -> "))"))
                    }
                } else if state[next] == nil {
                    state[next] = 1
                    stack.append((next, 0))
                }
            }
        }
        for name in names where state[name] == nil { walk(name) }

        guard errors.count == before, let outputName else {
            // Still check each node's own filter, so one run reports everything.
            for name in names { if let n = nodes[name] { _ = attempt { try filter(n.value, n.path, graph: GraphNodeContext(name: name, second: nil)) } } }
            return nil
        }

        // The order: second inputs first, then the first input, then the node.
        var order: [String] = []
        var placed: Set<String> = []
        /// Each node after its inputs; with its own stack, as the cycle walk.
        func place(_ root: String) {
            func visits(_ node: GraphNode) -> [String] {
                var list: [String] = []
                for input in node.inputs.dropFirst() { if case .node(let n, _) = input { list.append(n) } }
                if case .node(let n, _)? = node.inputs.first { list.append(n) }
                return list
            }
            guard !placed.contains(root), let node = nodes[root] else { return }
            placed.insert(root)
            var stack: [(name: String, visits: [String], next: Int)] = [(root, visits(node), 0)]
            while let top = stack.last {
                guard top.next < top.visits.count else {
                    order.append(top.name)
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let n = top.visits[top.next]
                guard !placed.contains(n), let child = nodes[n] else { continue }
                placed.insert(n)
                stack.append((n, visits(child), 0))
            }
        }
        place(outputName)
        for name in names where !placed.contains(name) {
            warn(nodes[name]!.value, nodes[name]!.path, "node \"\(name)\" is not used: the output \"\(outputName)\" does not depend on it")
        }

        var elements: [ChainElement] = []
        var previous = "source"
        for name in order {
            let node = nodes[name]!
            if case .node(let first, let at)? = node.inputs.first, first != previous {
                elements.append(.restart(node: first, at, path: node.path + ".inputs[0]"))
            }
            var second: GraphNodeContext.Second? = nil
            if node.inputs.count > 1 {
                switch node.inputs[1] {
                case .node(let n, _): second = .node(n)
                case .inline(let v, let p): second = .inline(v, path: p)
                }
            }
            elements.append(.filter(node.value, path: node.path, graph: GraphNodeContext(name: name, second: second)))
            previous = name
        }
        return elements
    }
}
