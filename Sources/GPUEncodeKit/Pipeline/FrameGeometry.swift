import CFFmpeg

// Where FFmpeg's pixel formats meet the renderer (GPUEncodeRender has no FFmpeg types).

extension RenderGeometry {
    /// The geometry for frames of `format` (a planar 8-bit Y'CbCr format) at this size.
    public init(width: Int32, height: Int32, format: AVPixelFormat, rotation: Rotation, filters: [FilterInstance] = []) {
        let desc = av_pix_fmt_desc_get(format)!.pointee
        self.init(sourceWidth: Int(width), sourceHeight: Int(height),
                  chromaShiftX: Int(desc.log2_chroma_w), chromaShiftY: Int(desc.log2_chroma_h), rotation: rotation,
                  filters: filters)
    }
}
