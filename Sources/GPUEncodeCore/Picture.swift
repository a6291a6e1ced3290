// Plain descriptions of a picture that both the Media side (FFmpeg) and the Render side (GL) use:
// how it is turned, how its Y'CbCr is coded, and its 8-bit planes in memory. No behaviour beyond
// what every layer agrees on; the colour conversions live in GPUEncodeRender (ColorMath.swift).

/// Clockwise rotation that makes the picture upright, from the stream's display matrix.
public enum Rotation: Int, Sendable {
    case none = 0, clockwise90 = 90, half = 180, clockwise270 = 270

    public var swapsDimensions: Bool { self == .clockwise90 || self == .clockwise270 }
}

/// Y'CbCr matrices (ITU-R BT.601, BT.709 and BT.2020).
public enum YUVMatrix: String, Sendable {
    case bt601, bt709, bt2020
}

public struct YUVColorSpace: Sendable, CustomStringConvertible {
    public var matrix: YUVMatrix
    public var fullRange: Bool
    /// The transfer function and primaries (ColorDescription.swift): SDR BT.709 unless the stream
    /// says otherwise.
    public var transfer: ColorTransfer
    public var primaries: ColorPrimaries
    /// Mastering display and content light level, where the stream has them.
    public var hdr: HDRMetadata

    public init(matrix: YUVMatrix, fullRange: Bool, transfer: ColorTransfer = .sdr, primaries: ColorPrimaries = .bt709,
                hdr: HDRMetadata = HDRMetadata()) {
        self.matrix = matrix
        self.fullRange = fullRange
        self.transfer = transfer
        self.primaries = primaries
        self.hdr = hdr
    }

    public var description: String {
        let extra = (transfer == .sdr ? "" : " \(transfer == .pq ? "PQ" : "HLG")") + (primaries == .bt709 ? "" : " \(primaries.rawValue) primaries")
        return "\(matrix.rawValue) \(fullRange ? "full" : "limited") range" + extra
    }
}

/// One 8-bit plane in client memory.
public struct Plane {
    public var data: UnsafeMutablePointer<UInt8>
    public var stride: Int

    public init(data: UnsafeMutablePointer<UInt8>, stride: Int) {
        self.data = data
        self.stride = stride
    }
}

/// What holds a frame's output planes while the GPU fills them (a pooled video frame on the Media
/// side): handed to `RenderPipeline` with a frame and handed back when that frame is finished.
public protocol PlaneBuffer: AnyObject {
    var planes: [Plane] { get }
}
