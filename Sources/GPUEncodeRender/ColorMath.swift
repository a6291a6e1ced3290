// The Y'CbCr matrices' coefficients (ITU-R BT.601, BT.709 and BT.2020) and the colour conversions
// the shaders use; the types are GPUEncodeCore's (Picture.swift).
import GPUEncodeCore

extension YUVMatrix {
    var kr: Double { switch self { case .bt601: return 0.299; case .bt709: return 0.2126; case .bt2020: return 0.2627 } }
    var kb: Double { switch self { case .bt601: return 0.114; case .bt709: return 0.0722; case .bt2020: return 0.0593 } }
    var kg: Double { 1 - kr - kb }
}

extension YUVColorSpace {
    /// rgb = M * yuv + offset, with yuv the normalised texture values (code / 255).
    func toRGB() -> (rows: [Float], offset: [Float]) {
        let (kr, kb, kg) = (matrix.kr, matrix.kb, matrix.kg)
        // Scale from code/255 to Y' in 0...1 and Cb, Cr in -0.5...0.5.
        let ys = fullRange ? 1.0 : 255.0 / 219.0
        let cs = fullRange ? 1.0 : 255.0 / 224.0
        let y0 = fullRange ? 0.0 : 16.0 / 255.0
        let c0 = 128.0 / 255.0
        let rows: [[Double]] = [
            [ys, 0, 2 * (1 - kr) * cs],
            [ys, -2 * kb * (1 - kb) / kg * cs, -2 * kr * (1 - kr) / kg * cs],
            [ys, 2 * (1 - kb) * cs, 0],
        ]
        let offset = rows.map { r in -(r[0] * y0 + r[1] * c0 + r[2] * c0) }
        return (rows.flatMap { $0 }.map(Float.init), offset.map(Float.init))
    }

    /// yuv = M * rgb + offset, in normalised code values.
    func fromRGB() -> (rows: [Float], offset: [Float]) {
        let (kr, kb, kg) = (matrix.kr, matrix.kb, matrix.kg)
        let ys = fullRange ? 1.0 : 219.0 / 255.0
        let cs = fullRange ? 1.0 : 224.0 / 255.0
        let y0 = fullRange ? 0.0 : 16.0 / 255.0
        let c0 = 128.0 / 255.0
        let rows: [[Double]] = [
            [kr * ys, kg * ys, kb * ys],
            [-kr / (2 * (1 - kb)) * cs, -kg / (2 * (1 - kb)) * cs, 0.5 * cs],
            [0.5 * cs, -kg / (2 * (1 - kr)) * cs, -kb / (2 * (1 - kr)) * cs],
        ]
        return (rows.flatMap { $0 }.map(Float.init), [Float(y0), Float(c0), Float(c0)])
    }
}

/// An affine colour map, x -> rows * x + offset (rows row-major, as `toRGB`/`fromRGB` give them).
typealias AffineColorMap = (rows: [Float], offset: [Float])

/// `first`, then `second`, as one map (in double precision).
func composed(_ first: AffineColorMap, then second: AffineColorMap) -> AffineColorMap {
    let a = second.rows.map(Double.init), b = first.rows.map(Double.init)
    var rows = [Float](repeating: 0, count: 9), offset = [Float](repeating: 0, count: 3)
    for i in 0..<3 {
        for j in 0..<3 { rows[3 * i + j] = Float((0..<3).map { a[3 * i + $0] * b[3 * $0 + j] }.reduce(0, +)) }
        offset[i] = Float((0..<3).map { a[3 * i + $0] * Double(first.offset[$0]) }.reduce(0, +) + Double(second.offset[i]))
    }
    return (rows, offset)
}

/// The map that changes nothing.
let identityColorMap: AffineColorMap = ([1, 0, 0, 0, 1, 0, 0, 0, 1], [0, 0, 0])
