import CFFmpeg

// Where FFmpeg's frames meet the renderer (GPUEncodeRender has no FFmpeg types): a geometry from a
// pixel format, and a frame's planes as the renderer takes them.

extension RenderGeometry {
    /// The geometry for frames of `format` (a planar 8-bit Y'CbCr format) at this size.
    public init(width: Int32, height: Int32, format: AVPixelFormat, rotation: Rotation, filters: [FilterInstance] = []) {
        let desc = av_pix_fmt_desc_get(format)!.pointee
        self.init(sourceWidth: Int(width), sourceHeight: Int(height),
                  chromaShiftX: Int(desc.log2_chroma_w), chromaShiftY: Int(desc.log2_chroma_h), rotation: rotation,
                  filters: filters)
    }
}

/// The planes of a planar or semi-planar frame (3 for yuv420p, 2 for NV12).
func framePlanes(_ frame: UnsafeMutablePointer<AVFrame>) -> [Plane] {
    let f = frame.pointee
    let count = Int(av_pix_fmt_count_planes(AVPixelFormat(rawValue: f.format)))
    let data = [f.data.0, f.data.1, f.data.2]
    let strides = [f.linesize.0, f.linesize.1, f.linesize.2]
    return (0..<min(count, 3)).map { Plane(data: data[$0]!, stride: Int(strides[$0])) }
}
