import CCUDAGL
import CFFmpeg
import GPUEncodeCore
import GPUEncodeMedia
import GPUEncodeRender

/// NVDEC frames (CUDA memory) into the GPU stage. Where the GL context is on the CUDA device the
/// frames are on, each frame's planes are copied on the GPU into two textures registered with
/// CUDA (CCUDAGL) and a `SemiPlanarSource` writes the renderer's source planes from them: no
/// download, no swscale, no upload. Elsewhere (llvmpipe, another GPU, a surface format other than
/// NV12/P010/P016, a driver that refuses), frames are downloaded and converted to the working
/// format as the decoder would have done, with one note saying why.
final class CUDAFrames {
    /// What the GPU stage does with one frame.
    enum Imported {
        /// The frame is in `source`'s textures: render it into the source planes (or a deinterlacer's).
        case onGPU(SemiPlanarSource)
        /// A downloaded copy in the working format, to upload.
        case downloaded(Frame)
    }

    private let workingFormat: AVPixelFormat
    private let log: @Sendable (LogLevel, String) -> Void
    private var interop: OpaquePointer?
    private var source: SemiPlanarSource?
    /// The surface format the textures were made for (NV12, P010 or P016).
    private var surface = AV_PIX_FMT_NONE
    /// Set once interop is found not to work: every frame is downloaded.
    private var downloading = false
    private var converter = FrameConverter()
    /// Where the C side writes an error line (one buffer for the run, not one per frame).
    private var error = [CChar](repeating: 0, count: 256)

    init(workingFormat: AVPixelFormat, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.workingFormat = workingFormat
        self.log = log
    }

    deinit {
        converter.release()
    }

    /// Lets go of the textures and the CUDA registration: on the GL thread, before the renderer goes.
    func close() {
        gpuencode_cuda_gl_close(interop)
        interop = nil
        source = nil
    }

    /// `frame` (AV_PIX_FMT_CUDA) for `renderer`, on the GL thread.
    func importFrame(_ frame: Frame, renderer: FrameRenderer) throws -> Imported {
        if !downloading, interop == nil { open(frame, renderer: renderer) }
        let g = renderer.geometry
        // A frame of another size or depth (the stream changed mid-way) is converted to the run's
        // size and format by swscale, as the software path does: the textures are the first frame's.
        let fits = Int(frame.width) == g.sourceWidth && Int(frame.height) == g.sourceHeight
            && HardwareDecoder.surfaceFormat(frame.pointer) == surface
        if fits, let interop, let source {
            let (luma, chroma) = (source.lumaExtent, source.chromaExtent)
            guard gpuencode_cuda_gl_copy(interop, frame.pointer, luma.bytes, luma.rows, chroma.bytes, chroma.rows, &error, error.count) == 0 else {
                throw GPUEncodeError(.gpu, "copying an NVDEC frame into a GL texture failed: \(String(cString: error))")
            }
            return .onGPU(source)
        }
        let downloaded = Frame()
        let rc = HardwareDecoder.download(frame.pointer, into: downloaded.pointer)
        guard rc >= 0 else { throw GPUEncodeError(.gpu, "downloading an NVDEC frame failed: \(averrorString(rc))") }
        guard let work = converter.convert(downloaded, to: workingFormat, width: g.sourceWidth, height: g.sourceHeight) else {
            throw GPUEncodeError(.internal, "cannot convert a \(frame.width)x\(frame.height) NVDEC frame")
        }
        work.keepFields(of: frame)
        return .downloaded(work)
    }

    /// Sets up interop for frames like `frame`, or decides to download them (with a note why).
    private func open(_ frame: Frame, renderer: FrameRenderer) {
        let surface = HardwareDecoder.surfaceFormat(frame.pointer)
        let g = renderer.geometry
        // The semi-planar formats NVDEC writes, each to the planar format of its depth.
        let fits = (surface == AV_PIX_FMT_NV12 && workingFormat == AV_PIX_FMT_YUV420P)
            || (surface == AV_PIX_FMT_P010LE && workingFormat == AV_PIX_FMT_YUV420P10LE)
            || (surface == AV_PIX_FMT_P016LE && (workingFormat == AV_PIX_FMT_YUV420P12LE || workingFormat == AV_PIX_FMT_YUV420P16LE))
        guard fits && g.chromaShiftX == 1 && g.chromaShiftY == 1 else {
            return fallBack("NVDEC's \(HardwareDecoder.surfaceFormatName(frame.pointer)) frames are not read from GPU memory")
        }
        do {
            let made = try SemiPlanarSource(renderer: renderer)
            guard let opened = gpuencode_cuda_gl_open(frame.pointer, made.lumaTexture, made.chromaTexture, &error, error.count) else {
                return fallBack(String(cString: error))
            }
            interop = opened
            source = made
            self.surface = surface
            log(.info, "NVDEC frames go to the GPU stage through CUDA-GL interop (\(HardwareDecoder.surfaceFormatName(frame.pointer)) copied on the GPU)")
        } catch {
            fallBack("\(error)")
        }
    }

    private func fallBack(_ why: String) {
        downloading = true
        log(.info, "NVDEC frames are downloaded to system memory: CUDA-GL interop is not available (\(why))")
    }
}
