// What a video renderer is told about the picture, in GL's own terms (no FFmpeg types: the
// Media side turns its pixel formats and frames into these). Rotation, Plane and PlaneBuffer are
// GPUEncodeCore's (Picture.swift): the Media side makes and fills them too.
import GPUEncodeCore
import GPUEncodeFilters

extension Rotation {
    /// Maps output pixel centres to source pixel centres: src = A * out + b (pixel units).
    func sourceMapping(srcWidth w: Float, srcHeight h: Float) -> (a: [Float], b: (Float, Float)) {
        switch self {
        case .none: return ([1, 0, 0, 1], (0, 0))
        case .clockwise90: return ([0, 1, -1, 0], (0, h))
        case .half: return ([-1, 0, 0, -1], (w, h))
        case .clockwise270: return ([0, -1, 1, 0], (w, 0))
        }
    }
}

/// Where the picture comes from and where it goes, fixed for a whole run.
public struct RenderGeometry: Sendable {
    public var sourceWidth: Int
    public var sourceHeight: Int
    /// log2 of the chroma subsampling (1, 1 for 4:2:0).
    public var chromaShiftX: Int
    public var chromaShiftY: Int
    public var rotation: Rotation
    /// Bits per sample of the source planes: 8 (one byte a sample), or 9 to 16 (two bytes, little
    /// endian, as FFmpeg's `yuv420p10le` and kin). Deeper sources are uploaded as 16-bit integer
    /// textures and read back as code / (255 * 2^(bits-8)), so the colour matrices made for 8 bits
    /// hold for every depth.
    public var bitDepth: Int
    /// The source turned upright and made even (odd sizes lose their last column or row): what the
    /// filter chain starts from.
    public var uprightWidth: Int
    public var uprightHeight: Int
    /// What the filter chain makes of it (geometry filters change it), made even for 4:2:0.
    public var outputWidth: Int
    public var outputHeight: Int

    public init(sourceWidth: Int, sourceHeight: Int, chromaShiftX: Int, chromaShiftY: Int, rotation: Rotation,
                bitDepth: Int = 8, filters: [FilterInstance] = []) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.chromaShiftX = chromaShiftX
        self.chromaShiftY = chromaShiftY
        self.rotation = rotation
        self.bitDepth = bitDepth
        let (w, h) = rotation.swapsDimensions ? (sourceHeight, sourceWidth) : (sourceWidth, sourceHeight)
        uprightWidth = w & ~1
        uprightHeight = h & ~1
        let (cw, ch) = ChainRenderer.outputSize(of: filters, width: uprightWidth, height: uprightHeight)
        outputWidth = max(2, cw & ~1)
        outputHeight = max(2, ch & ~1)
    }

    var chromaWidth: Int { (sourceWidth + (1 << chromaShiftX) - 1) >> chromaShiftX }
    var chromaHeight: Int { (sourceHeight + (1 << chromaShiftY) - 1) >> chromaShiftY }
}

/// How a frame goes through the GPU.
public enum RenderPath: String, Sendable, CaseIterable {
    /// Chains of point filters: straight from the source planes to the output planes with the
    /// filters fused, no full-size RGBA intermediate (one pass for upright 4:2:0, a luma pass
    /// shading four pixels per fragment and a half-size chroma pass otherwise). Chains with
    /// sampling filters (blurs, geometry) go through RGBA textures as `viaRGBA` does.
    case direct
    /// The straightforward path: source → full-size RGBA with the filter chain → Y pass → CbCr pass.
    /// The reference for `direct`.
    case viaRGBA
    /// GPUImage's way, for tests: one pass per filter through 8-bit RGBA textures, the reference
    /// that fusing filters into one shader must match.
    case unfused
}
