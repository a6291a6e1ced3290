import Glibc

// Side-by-side comparisons as one filter chain, so a preview, a transcode and a contact sheet show
// them the same way and at the cost of one extra pass:
//
//   [B's filters, the last one with id B]  [restart from source]  [A's filters]
//   [split, overlay = node B]  [label B]  [label A]
//
// The restart is a `nodeInput` of the chain's source used as a filter of its own: it replaces the
// picture with the source, so A starts from the original frame as it would alone.

/// The chain that shows preset A beside B (or the original), divided by a `split` line, each side
/// labelled with its preset's name.
public enum Comparison {
    /// The id the composed chain gives B's last filter (ids in preset files cannot contain a dot).
    public static let nodeID = "compare.b"
    /// What the side without a preset is called.
    public static let originalName = "original"

    /// A with B (nil: the original) on the overlay side of the divider: left at `angle` 0, top at
    /// 90, top-left at 45. `split` is the divider's position (0...1); with `animate` it sweeps from
    /// 1 (all B) at time 0 to 0 (all A) at `duration` seconds, so the wipe uncovers A over the
    /// clip. The labels go in the corners furthest into each side.
    public static func make(a: Preset, b: Preset?, split: Double = 0.5, angle: Double = 0, animate: Bool = false,
                            duration: Double? = nil, labels: Bool = true) throws -> Preset {
        guard (0...1).contains(split) else { throw GPUEncodeError(.usage, "--split \(formatNumber(split)) must be between 0 and 1") }
        guard (-360...360).contains(angle) else { throw GPUEncodeError(.usage, "--split-angle \(formatNumber(angle)) must be between -360 and 360") }
        var filters: [FilterInstance] = []
        var node = "source"
        if let b, !b.filters.isEmpty {
            filters = b.filters
            filters[filters.count - 1].id = nodeID
            node = nodeID
            filters.append(NodeInputFilter.instance("source"))
        }
        filters += a.filters
        var position = ParameterValue.float(split)
        if animate {
            guard let duration, duration > 0 else {
                throw GPUEncodeError(.usage, "--split-animate needs the clip's duration, and this input does not tell it")
            }
            position = .animated(Keyframes(times: [0, duration], values: [.float(1), .float(0)], easing: .linear))
        }
        filters.append(try FilterInstance(SplitFilter.declaration, values: ["position": position, "angle": .float(angle)],
                                          overlay: NodeInputFilter.instance(node)).prepared())
        let bName = b?.name ?? originalName
        if labels {
            let (bCorner, aCorner) = labelCorners(angle: angle)
            filters.append(try label(bName, corner: bCorner))
            filters.append(try label(a.name, corner: aCorner))
        }
        return Preset(composedName: "\(bName) | \(a.name)", description: "\(a.name) compared with \(bName)", filters: filters, origin: a.origin,
                      encode: a.encode)
    }

    /// A `label` filter with `text` at `corner` (a `LabelFilter.corners` word).
    public static func label(_ text: String, corner: String, scale: Int = 0) throws -> FilterInstance {
        try FilterInstance(LabelFilter.declaration, values: ["text": .string(text), "corner": .string(corner), "scale": .int(scale)]).prepared()
    }

    /// The corners deepest into the overlay's side and the base's side of a line at `angle`: the
    /// picture's corners projected on the direction the line faces, ties going to the top, then
    /// the left.
    public static func labelCorners(angle: Double) -> (overlay: String, base: String) {
        let a = angle * Double.pi / 180
        let n = (cos(a), sin(a))
        let corners: [(String, Double, Double)] = [("topLeft", -1, -1), ("topRight", 1, -1), ("bottomLeft", -1, 1), ("bottomRight", 1, 1)]
        let scores = corners.map { ($0.0, $0.1 * n.0 + $0.2 * n.1) }
        let low = scores.map(\.1).min()!, high = scores.map(\.1).max()!
        let overlay = scores.first { $0.1 <= low + 1e-9 }!.0
        let base = scores.first { $0.1 >= high - 1e-9 && $0.0 != overlay }?.0 ?? "bottomRight"
        return (overlay, base)
    }

    /// The length of a movie in seconds (nil when the container does not say), for `--split-animate`.
    public static func duration(of path: String) throws -> Double? {
        let input = try VideoSource(path: path, threads: 1)
        return input.durationSeconds
    }
}

extension Preset {
    /// A preset made in code (a comparison), not read from JSON. It keeps the compared preset's
    /// encoder defaults (`encode`).
    init(composedName name: String, description: String, filters: [FilterInstance], origin: String,
         encode: PresetEncodeSettings = PresetEncodeSettings()) {
        self.init(name: name, description: description, version: Preset.currentVersion, author: nil, tags: [], filters: filters,
                  encode: encode, origin: origin, ancestry: [], warnings: [], shaderDefinitions: [:])
    }
}
