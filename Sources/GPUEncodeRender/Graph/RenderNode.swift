import GPUEncodeCore
import GPUEncodeFilters

/// One step of the render graph: what happens to the picture, not how it is drawn. The job makes
/// the first graph (source, the preset's filters, the output scale, the output); the passes insert
/// the conversions, move, bake and group nodes, and say where each runs (`RenderGraph`).
public struct RenderNode: Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// The decoded planes: size, depth and chroma layout.
        case source(width: Int, height: Int, bitDepth: Int, chroma: String)
        /// The source turned upright (90, 180 or 270 degrees), as it is read.
        case rotate(Rotation)
        /// Y'CbCr to R'G'B' through the source's matrix and range.
        case toRGB(YUVColorSpace)
        /// The source's transfer and primaries to SDR BT.709: linearise, map the gamut, tone-map
        /// (HDR) and encode again; `what` names the steps.
        case sourceColour(String)
        /// Each frame's Dolby Vision RPU reshapes the base layer before its colour conversion.
        case dolbyVision
        /// Into (`true`) or out of (`false`) linear light around a linear-light preset's filters.
        case linearLight(Bool)
        /// A filter of the preset: point (pixel for pixel), sampling (reads neighbours), blend or
        /// measurement; `index` is its place in the preset.
        case filter(index: Int, FilterInstance)
        /// The output scale (`--width` and its kin): Lanczos, on the GPU (`passes`: the scaler's
        /// two filters) or in swscale before the upload.
        case scale(width: Int, height: Int, site: ScaleSite, passes: [FilterInstance])
        /// A run of point colour nodes sampled into one 3D table (`BakeColour`): `size` a side (0:
        /// chosen by the error bound when the renderer bakes it), `of` what it replaced, `filters`
        /// the preset's filters it holds (drawn into it, so they stay the programs' filters).
        case bakedColour(size: Int, of: [String], filters: [FilterInstance])
        /// R'G'B' to the output's Y'CbCr.
        case toYCbCr(YUVColorSpace)
        /// Chroma made from R'G'B' at the output's chroma resolution (the decimation kernel).
        case chromaDecimate(String)
        /// An ordered dither to 8-bit codes (deep sources to 8-bit outputs).
        case dither
        /// The output planes read back.
        case output(String)
    }

    /// Where a scale runs.
    public enum ScaleSite: String, Sendable {
        case gpu = "GPU, Lanczos passes"
        case swscale = "swscale (lanczos) before the upload"
    }

    public var kind: Kind
    /// The pass this node runs in, once `FuseIntoPrograms` has run (0 based; `conversionPass`: the
    /// chain's conversion to Y'CbCr, after its passes).
    public var program: Int?
    public static let conversionPass = Int.max

    public init(_ kind: Kind) {
        self.kind = kind
    }

    /// Point nodes map one pixel to one pixel with no reference to its neighbours: they commute
    /// with a scale (up to the scale's own rounding) and may be baked together.
    public var isPointwise: Bool {
        switch kind {
        case .toRGB, .sourceColour, .dolbyVision, .linearLight, .bakedColour, .toYCbCr: return true
        case .filter(_, let f):
            if case .point = f.declaration.kind { return true }
            return false
        default: return false
        }
    }

    public var filter: FilterInstance? {
        if case .filter(_, let f) = kind { return f }
        return nil
    }

    public var isScale: Bool {
        if case .scale = kind { return true }
        return false
    }

    public var description: String {
        let text: String
        switch kind {
        case .source(let w, let h, let bits, let chroma): text = "source \(w)x\(h), \(bits)-bit \(chroma)"
        case .rotate(let r): text = "rotate \(r.rawValue) degrees"
        case .toRGB(let c): text = "Y'CbCr to R'G'B' (\(c.matrix), \(c.fullRange ? "full" : "limited") range)"
        case .sourceColour(let what): text = "source colour: \(what)"
        case .dolbyVision: text = "Dolby Vision reshaping (each frame's RPU)"
        case .linearLight(let into): text = into ? "to linear light" : "from linear light"
        case .filter(let i, let f): text = "filter \(i + 1): \(f.declaration.name) (\(RenderNode.kindName(f)))"
        case .scale(let w, let h, let site, _): text = "scale to \(w)x\(h) (\(site.rawValue))"
        case .bakedColour(let n, let of, _):
            let size = n > 0 ? "\(n)x\(n)x\(n)" : "17, 33 or 65 a side by the error bound, measured as it is baked"
            text = "baked colour: one 3D table (\(size)) for \(of.joined(separator: ", "))"
        case .toYCbCr(let c): text = "R'G'B' to Y'CbCr (\(c.matrix), \(c.fullRange ? "full" : "limited") range)"
        case .chromaDecimate(let kernel): text = "chroma decimation (\(kernel))"
        case .dither: text = "dither to 8 bits"
        case .output(let what): text = "output \(what)"
        }
        guard let program else { return text }
        return (program == RenderNode.conversionPass ? "[conversion] " : "[pass \(program + 1)] ") + text
    }

    static func kindName(_ f: FilterInstance) -> String {
        switch f.declaration.kind {
        case .point: return "point"
        case .sampling: return "sampling"
        case .blend: return "blend"
        case .average: return "measurement"
        }
    }
}
