import GPUEncodeCore

/// Puts the colour conversions into the graph as nodes of their own, where the picture needs
/// them: the source's matrix (and, for HDR or other primaries, its transfer, gamut and tone
/// mapping; a Dolby Vision RPU's reshaping first), linear light around a linear-light preset's
/// filters, and at the end the output's matrix, the chroma decimation and the dither a deep
/// source needs on its way to 8 bits.
public struct InsertConversions: GraphPass {
    public let name = "insert conversions"
    public let isOptional = false
    public init() {}

    public func run(_ graph: inout RenderGraph, job: RenderJob) throws {
        let color = job.sourceColor
        var head: [RenderNode] = []
        if job.dolbyVision { head.append(RenderNode(.dolbyVision)) }
        let output = job.keepsSignal ? YUVColorSpace(matrix: job.source.matrix, fullRange: job.source.fullRange)
                                     : YUVColorSpace(matrix: .bt709, fullRange: false)
        // A transparent 8-bit chain scaled with a plain matrix scales Y'CbCr codes as they are
        // and changes the matrix once at the end (the scale and the chroma halving are linear, so
        // they commute with it): codes fit 8-bit intermediates, so nothing clips.
        let scale = graph.scaleIndex
        graph.scalesYCbCr = graph.transparent && scale != nil && color.isIdentity && !job.precise
        if !graph.scalesYCbCr { head.append(RenderNode(.toRGB(job.source))) }
        if !color.isIdentity && !job.keepsSignal {
            head.append(RenderNode(.sourceColour(InsertConversions.describe(job))))
        }
        if job.light == .linear { head.append(RenderNode(.linearLight(true))) }
        let start = graph.afterSource
        graph.nodes.insert(contentsOf: head, at: start)
        if job.light == .linear {
            let end = graph.scaleIndex ?? graph.nodes.count - 1
            graph.nodes.insert(RenderNode(.linearLight(false)), at: end)
        }
        var tail: [RenderNode] = []
        if graph.scalesYCbCr { tail.append(RenderNode(.toRGB(job.source))) }
        tail.append(RenderNode(.toYCbCr(output)))
        let decimator = ChromaDecimator(for: job.geometry)
        tail.append(RenderNode(.chromaDecimate(decimator.undoesLinearAcross ? "inverse of the linear upsampling" : "anti-aliasing low-pass")))
        if job.geometry.bitDepth > 8 && !job.keepsSignal { tail.append(RenderNode(.dither)) }
        graph.nodes.insert(contentsOf: tail, at: graph.nodes.count - 1)
    }

    static func describe(_ job: RenderJob) -> String {
        let c = job.source
        let transfer = c.transfer == .sdr ? "SDR" : c.transfer == .pq ? "PQ" : "HLG"
        var steps = ["\(transfer) \(c.primaries) to linear"]
        if c.primaries != .bt709 { steps.append("\(c.primaries) to BT.709 primaries") }
        if c.transfer.isHDR {
            steps.append("tone map (\(job.toneMapping.curve.rawValue), \(Int(job.toneMapping.targetPeak)) nits\(job.toneMapping.peakDetect ? ", detected peaks" : ""))")
        }
        steps.append("BT.709 encoding")
        return steps.joined(separator: ", ")
    }
}
