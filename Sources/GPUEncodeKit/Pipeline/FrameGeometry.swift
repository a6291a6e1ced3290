import CFFmpeg

// Where FFmpeg's pixel formats meet the renderer (GPUEncodeRender has no FFmpeg types).

extension RenderGeometry {
    /// The geometry for frames of `format` (a planar Y'CbCr format of 8 bits, or 9 to 16 bits little endian) at this size.
    public init(width: Int32, height: Int32, format: AVPixelFormat, rotation: Rotation, filters: [FilterInstance] = []) {
        let desc = av_pix_fmt_desc_get(format)!.pointee
        self.init(sourceWidth: Int(width), sourceHeight: Int(height),
                  chromaShiftX: Int(desc.log2_chroma_w), chromaShiftY: Int(desc.log2_chroma_h), rotation: rotation,
                  bitDepth: Int(desc.comp.0.depth), filters: filters)
    }
}
