import CFFmpeg
import GPUEncodeFilters
import GPUEncodeMedia
import GPUEncodeRender
import GPUEncodeSettings

/// `--width` and its kin for one input: the size of the picture as displayed (upright, after the
/// preset's filters, its sample aspect ratio applied) and the size asked for, if it differs. One place for the
/// transcode and `--benchmark-filters`, so the benchmark times the chain the transcode runs.
struct OutputScale {
    /// The picture as displayed before scaling.
    let displayed: RenderGeometry
    /// The stream's sample aspect ratio, turned with the picture (num 0 when unknown).
    let sampleAspect: AVRational
    /// The scaled size; nil when nothing is to be scaled.
    let target: (width: Int, height: Int)?

    init(_ request: ScaleRequest, input: VideoSource, preset filters: [FilterInstance]) {
        let dec = input.decoder.pointee
        let stream = input.videoStream.pointee
        var sar = stream.sample_aspect_ratio.num > 0 ? stream.sample_aspect_ratio : dec.sample_aspect_ratio
        if input.rotation.swapsDimensions && sar.num > 0 { sar = AVRational(num: sar.den, den: sar.num) }
        sampleAspect = sar
        displayed = RenderGeometry(width: dec.width, height: dec.height, format: AV_PIX_FMT_YUV420P, rotation: input.rotation, filters: filters)
        target = request.target(width: displayed.outputWidth, height: displayed.outputHeight,
                                sampleAspect: sar.num > 0 && sar.den > 0 ? Double(sar.num) / Double(sar.den) : 1)
    }

    /// The preset's filters with the scaler's two passes after them when a size is asked for.
    func filters(after preset: [FilterInstance]) -> [FilterInstance] {
        preset + (target.map { ScaleFilter.instances(width: $0.width, height: $0.height) } ?? [])
    }
}
