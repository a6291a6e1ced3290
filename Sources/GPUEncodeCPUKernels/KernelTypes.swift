// What the CPU kernels take: plane pointers and the chain's description.

/// A colour map x -> rows * x + offset on three channels (rows row-major), in single precision as
/// the shaders compute it.
public struct AffineMap3: Sendable, Equatable {
    public var rows: [Float]
    public var offset: [Float]

    public init(rows: [Float], offset: [Float]) {
        precondition(rows.count == 9 && offset.count == 3)
        self.rows = rows
        self.offset = offset
    }
}

/// A table per channel: channel i becomes `tables[i][Int(clamp(c_i, 0, 1) * (count - 1) + 0.5)]`
/// (the nearest entry, as the shader indexes its uniform array).
public struct ChannelLookup: Sendable, Equatable {
    public var tables: [[Float]]

    public init(tables: [[Float]]) {
        precondition(tables.count == 3 && tables.allSatisfy { $0.count == tables[0].count && !$0.isEmpty })
        self.tables = tables
    }
}

/// One filter of a chain the kernels run; each filter's output is clamped and rounded to 8 bits,
/// as the reference's 8-bit intermediate pictures are.
public enum ChainOp: Sendable, Equatable {
    case affine(AffineMap3)
    case lookup(ChannelLookup)
}

/// One 8-bit 4:2:0 frame's planes, read (`source`) or written (`output`). `chromaStep` 2 with
/// `cr` = `cb` + 1 is NV12's interleaved chroma.
public struct PlanePointers {
    public var y: UnsafeMutablePointer<UInt8>
    public var yStride: Int
    public var cb: UnsafeMutablePointer<UInt8>
    public var cr: UnsafeMutablePointer<UInt8>
    public var chromaStride: Int
    public var chromaStep: Int

    public init(y: UnsafeMutablePointer<UInt8>, yStride: Int, cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>,
                chromaStride: Int, chromaStep: Int = 1) {
        (self.y, self.yStride, self.cb, self.cr, self.chromaStride, self.chromaStep) = (y, yStride, cb, cr, chromaStride, chromaStep)
    }
}

/// What a kernel computes: normalised Y'CbCr (code / 255) to R'G'B' (`toRGB`, clamped to 0...1
/// unless the chain is transparent), the filters, back to normalised codes (`toYCbCr`), and the
/// chroma decimation's taps (`across`, five; `down`, four).
public struct PointChainDescription: Sendable {
    public var toRGB: AffineMap3
    public var clampsSource: Bool
    public var ops: [ChainOp]
    public var toYCbCr: AffineMap3
    public var across: [Float]
    public var down: [Float]

    public init(toRGB: AffineMap3, clampsSource: Bool, ops: [ChainOp], toYCbCr: AffineMap3, across: [Float], down: [Float]) {
        precondition(across.count == 5 && down.count == 4)
        (self.toRGB, self.clampsSource, self.ops, self.toYCbCr, self.across, self.down) = (toRGB, clampsSource, ops, toYCbCr, across, down)
    }
}
