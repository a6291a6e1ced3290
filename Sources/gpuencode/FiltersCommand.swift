import ArgumentParser
import Glibc
import GPUEncodeKit

struct FiltersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filters",
        abstract: "List the filters presets can use, or describe one.",
        discussion: """
        EXAMPLES:
          gpuencode filters                 every filter, by family, with a one-line summary
          gpuencode filters gaussianBlur    its parameters: type, default, range and meaning

        In a preset, a filter is {"filter": NAME, PARAMETER: VALUE, ...}; parameters left out take \
        their defaults. Blends also take "with": a colour ("#f7b099", "rgba(247,176,153,0.56)", \
        [r, g, b, a]), an image file, or a generator such as {"filter": "radialGradient", ...}.
        """
    )

    @Argument(help: "A filter name.")
    var name: String?

    @Flag(help: "Print the reference of every filter as Markdown (what docs/filters.md holds).")
    var markdown = false

    func run() throws {
        if markdown {
            print(FilterDocs.markdown(), terminator: "")
            return
        }
        guard let name else {
            for category in FilterCategory.allCases {
                let list = FilterRegistry.all.filter { $0.category == category }
                guard !list.isEmpty else { continue }
                print("\(category.rawValue):")
                let width = (list.map(\.name.count).max() ?? 0) + 2
                for d in list { print("  \(d.name.padding(width))\(d.summary)") }
                print("")
            }
            print("gpuencode filters NAME describes one filter and its parameters.")
            return
        }
        guard let d = FilterRegistry.named(name) else {
            let names = FilterRegistry.all.map(\.name)
            let close = names.filter { $0.lowercased().hasPrefix(String(name.lowercased().prefix(3))) }
            fputs("gpuencode: error: no filter named \"\(name)\"\(close.isEmpty ? "" : " (did you mean \(close.joined(separator: ", "))?)"); gpuencode filters lists them\n", stderr)
            throw ExitCode(64)
        }
        print("\(d.name) (\(d.category.rawValue.lowercased()); \(kindDescription(d)))")
        print("  \(d.summary)")
        var rows: [(String, String, String, String, String)] = d.parameters.map {
            ($0.name, $0.type.typeName, $0.defaultValue.description, $0.type.rangeDescription, $0.summary)
        }
        if case .blend = d.kind {
            rows.append(("with", "input", "none", "colour, image or movie, generator, node", "the second input, blended over the chain so far"))
        }
        guard !rows.isEmpty else { print("  No parameters."); return }
        print("")
        let header = ("parameter", "type", "default", "range", "meaning")
        let all = [header] + rows
        let w0 = all.map(\.0.count).max()! + 2, w1 = all.map(\.1.count).max()! + 2
        let w2 = min(all.map(\.2.count).max()!, 28) + 2, w3 = min(all.map(\.3.count).max()!, 30) + 2
        for r in all { print("  \(r.0.padding(w0))\(r.1.padding(w1))\(r.2.padding(w2))\(r.3.padding(w3))\(r.4)") }
    }

    private func kindDescription(_ d: FilterDeclaration) -> String {
        switch d.kind {
        case .point: return "point filter, fused with its neighbours"
        case .sampling(_, let passes): return "samples its neighbourhood, \(passes.count) pass\(passes.count == 1 ? "" : "es")"
        case .blend: return "blend of the chain so far with a second input"
        case .average: return "a measurement; the picture passes through"
        }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
