// Fusing a chain's per-channel steps into one table, for the kernels: fewer steps a pixel, the
// same bytes.

extension ChainOp {
    /// Whether each output channel reads its own input channel alone: a table per channel, or a
    /// map with no coefficient across channels (brightness, contrast, a screen or multiply over a
    /// solid colour).
    var isPerChannel: Bool {
        switch self {
        case .lookup: return true
        case .affine(let a): return [1, 2, 3, 5, 6, 7].allSatisfy { a.rows[$0] == 0 }
        }
    }

    var isLookup: Bool {
        if case .lookup = self { return true }
        return false
    }

    /// `ops` with each run of per-channel steps that reads 8-bit codes and holds a table made one
    /// table of 256 entries per channel, giving the kernels' values exactly: every step after the
    /// first reads 8-bit codes (the kernels round each step's output to them, as the reference's
    /// 8-bit pictures between filters), so such a run is a function of one code per channel,
    /// computed here code by code in the kernels' own arithmetic (a map's fused multiply-add, a
    /// table's nearest entry, the rounding between steps). 1977's screen over a solid colour and
    /// its curve become one table: a map a pixel less. (A run without a table stays: a map costs
    /// the kernels less than a table's scalar reads.)
    public static func fusingPerChannelRuns(_ ops: [ChainOp]) -> [ChainOp] {
        guard ops.count > 2 else { return ops }
        var fused = [ops[0]]
        var i = 1
        while i < ops.count {
            var end = i
            while end < ops.count, ops[end].isPerChannel { end += 1 }
            let run = ops[i..<end]
            guard run.count >= 2, run.contains(where: \.isLookup) else {
                fused.append(ops[i])
                i += 1
                continue
            }
            fused.append(.lookup(ChannelLookup(tables: (0..<3).map { c in (0..<256).map { code in value(of: run, channel: c, code: code) } })))
            i = end
        }
        return fused
    }

    /// Channel `channel` after the steps `run`, from code `code` (the kernels' `round8` value), without
    /// the rounding after the last step (the kernels round the fused step's output).
    static func value(of run: ArraySlice<ChainOp>, channel c: Int, code: Int) -> Float {
        var v = Float(code) * (1 / 255 as Float)
        for (n, op) in run.enumerated() {
            switch op {
            case .affine(let a):
                // The kernels' o + m0 x + m1 y + m2 z, as fused multiply-adds: the two across are zero.
                v = a.offset[c].addingProduct(a.rows[4 * c], v)
            case .lookup(let l):
                let s = (min(max(v, 0), 1) * Float(l.tables[c].count - 1) + 0.5).rounded(.down)
                v = l.tables[c][Int(s)]
            }
            if n < run.count - 1 { v = (min(max(v, 0), 1) * 255 + 0.5).rounded(.down) * (1 / 255 as Float) }
        }
        return v
    }
}
