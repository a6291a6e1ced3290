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

    public init(matrix: YUVMatrix, fullRange: Bool) {
        self.matrix = matrix
        self.fullRange = fullRange
    }

    public var description: String { "\(matrix.rawValue) \(fullRange ? "full" : "limited") range" }
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
