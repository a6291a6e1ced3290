import CEGL
import Glibc
import GPUEncodeCore
import GPUEncodeFilters

/// Y'CbCr planes (8 bits, or deeper as two bytes a sample) in, filtered BT.709 limited-range 4:2:0 planes out. Video frames go through a
/// `RenderPipeline`, which decides when each frame's readback is collected; previews take the
/// filtered picture as RGBA (`renderRGBA`).
public final class FrameRenderer {
    public let geometry: RenderGeometry
    public let path: RenderPath
    public let light: FilterLight
    /// How the chain was compiled (`CompileOptions.reference`: without the optional passes).
    public let compile: CompileOptions
    /// The compiled render graph, and the graph after each pass (`--passes`).
    public let compiled: RenderCompiler.Result
    public var writesNV12: Bool { nv12 != nil }
    /// Kept HDR (`keepsSignal`): 10-bit output planes (a yuv420p10le frame: Y, Cb, Cr), in the
    /// source's matrix and range, instead of 8-bit BT.709 limited range.
    public let writesTenBit: Bool
    let planes: [Texture]
    /// Source planes uploaded four samples per RGBA8 texel (the fused single pass reads them so).
    let packed: Bool
    /// The three-attachment target (even Y rows, odd Y rows, CbCr) read back as NV12: the fused
    /// single pass's, or the packed conversion at the end of a chain.
    var nv12: RenderTarget?
    /// The fused single program (or luma + chroma programs) when the chain needs no intermediate.
    var fast: [(program: ShaderProgram, target: RenderTarget, bindings: FilterBindings)] = []
    /// Otherwise: the chain through RGBA textures, then its conversion to Y and CbCr.
    var chain: ChainRenderer?
    /// Or, for a large Gaussian blur alone, the blur on the planes themselves (`BlurOnPlanes`).
    var planeBlur: PlaneBlur?
    /// `--peak-detect`: the GPU measurement of each frame's peak.
    private var detector: PeakDetector?
    /// Dolby Vision: the reshaping whose uniforms each frame's RPU sets (`setDolbyVision`), the RPU
    /// the programs hold and the one the next frame is drawn with.
    private let dolbyVision: DolbyVisionReshape?
    private var appliedRPU: DolbyVisionRPU?
    private var nextRPU: DolbyVisionRPU?
    /// Baked colour (`BakeColour`): the fused passes' `filtered` as one 3D table lookup.
    var baked: BakedColour?
    /// The CPU executions (`cpuPlanes`, `cpuBlocks`, `cpuPlaneBlur`): no GL program draws; the CPU filters the planes.
    private var hostPlanes: HostPlanes?
    /// The peak (target-peak units) the last frame was tone-mapped with, when peaks are detected.
    var detectedPeak: Double? { detector?.peak }
    var conversion: [(program: ShaderProgram, target: RenderTarget)] = []
    /// A chain that ends in the output scaler: its chroma, scaled as swscale scales chroma planes.
    var scaledChroma: ScaledChroma?
    private var vao: GLuint = 0
    private var scratch: [UInt8] = []
    private var scratch16: [UInt16] = []
    /// Frames rendered so far.
    public private(set) var frameIndex = 0
    /// The passes this renderer runs, one line each (what `-v` prints; `passPlan` predicts them).
    public internal(set) var passes: [String] = []
    /// The last frame's measurements (`averageColor`), in chain order.
    public var statistics: [(name: String, value: [Double])] { chain?.statistics ?? [] }

    /// Pixel buffer objects for the single-pass path's transfers (set on hardware GPUs).
    private let transfers: TransferBuffers?
    /// The packed pass is a compute shader that writes the NV12 frame into a read buffer
    /// (`TransferOptions.computePass`); `nv12Layout` is where its rows lie there.
    var computeBlocks = false
    var nv12Layout: (rowBytes: Int, chromaOffset: Int, size: Int) = (0, 0, 0)
    /// Readbacks queued by `submit` and not yet collected: which set of read buffers holds each.
    private var pendingReads: [Int] = []
    private var nextReadSet = 0
    /// Sets of read buffers (`TransferOptions.framesInFlight`, 2 by default): frame N's readback
    /// is still in flight while frame N+1 is drawn.
    let readSets: Int

    /// Whether `submit`/`collect` can overlap one frame's readback with the next frame's work
    /// (pixel buffer objects on the single-pass path); otherwise frames go through `render`.
    var canPipeline: Bool { transfers != nil }
    /// Frames submitted and not yet collected.
    var pendingFrames: Int { pendingReads.count }
    /// Whether the GPU has finished the oldest submitted frame, so collecting it would not wait.
    var oldestIsDone: Bool {
        guard let transfers, let set = pendingReads.first else { return false }
        return (0..<3).allSatisfy { transfers.isDone(3 + 3 * set + $0) }
    }

    /// `limits`: the current context's, unless a test plans for another GPU.
    /// `light`: the preset's; linear light linearises the source, filters in half float and
    /// re-encodes at the end (`lightGLSL`). `toneMapping`: how an HDR source becomes SDR BT.709
    /// (SourceColorShader.swift). `keepsSignal` (`--hdr keep`): the source's R'G'B' through its own
    /// matrix only (no transfer or primaries change, no tone mapping), filtered in half float, and
    /// written back through the same matrix and range as 10-bit planes (`writesTenBit`).
    /// `dolbyVision`: each frame's RPU (`setDolbyVision`) applied before tone mapping; `source` is
    /// then the colour space `DolbyVisionRPU.colorSpace` gives.
    public init(geometry g: RenderGeometry, source: YUVColorSpace, filters: [FilterInstance], path: RenderPath = .direct,
                light: FilterLight = .gamma, transfer: TransferOptions = TransferOptions(mode: .client), limits: GPULimits? = nil,
                toneMapping: ToneMapping = ToneMapping(), keepsSignal: Bool = false, dolbyVision: DolbyVisionReshape? = nil,
                compile: CompileOptions = CompileOptions(), scaleFirst: ScaleFirst? = nil, cost: CostModel? = nil) throws {
        (geometry, self.path, self.light, self.compile, writesTenBit) = (g, path, light, compile, keepsSignal)
        self.dolbyVision = keepsSignal ? nil : dolbyVision
        let limits = limits ?? GPULimits.current()
        try ChainRenderer.checkSize(g.sourceWidth, g.sourceHeight, limits: limits, of: .input)
        try ChainRenderer.checkSize(g.outputWidth, g.outputHeight, limits: limits, of: .preset(filters.first?.context.origin))
        let job = FrameRenderer.job(geometry: g, source: source, filters: filters, path: path, light: light, toneMapping: toneMapping,
                                    dolbyVision: self.dolbyVision, limits: limits, cost: cost ?? .current(),
                                    keepsSignal: keepsSignal, scaleFirst: scaleFirst)
        compiled = try RenderCompiler(options: compile).compile(job)
        let graph = compiled.graph
        packed = graph.readsPacked
        precondition(!packed || ChromaDecimator(for: g).undoesLinearAcross, "the packed pass's outer rows assume the inverse kernel across")
        let writesNV12 = FrameRenderer.writesNV12(g, path: path, filters: filters)
        readSets = transfer.framesInFlight
        // `transfer` as `TransferOptions.resolved(for:)` gives it: pbo or client, compute decided.
        transfers = writesNV12 && transfer.mode == .pbo && graph.execution?.runsOnCPU != true
            ? TransferBuffers(count: 3 + 3 * readSets, copyThreads: transfer.copyThreads, mapping: transfer.mapping) : nil
        if let execution = graph.execution, execution.runsOnCPU {
            // No GL object: the CPU filters the planes, and the context may go (`runsOnCPU`).
            planes = []
            passes = graph.programs
            hostPlanes = HostPlanes(geometry: g, source: source, filters: graph.renderedFilters, clampsSource: !graph.transparent,
                                    execution: execution, bands: CPUFeatures.kernelBands())
            return
        }
        planes = FrameRenderer.sourceTextures(g, packed: packed)
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glPixelStorei(GLenum(GL_PACK_ALIGNMENT), 1)
        glGenVertexArrays(1, &vao)
        glBindVertexArray(vao)
        var sourceColor = SourceColorShader(color: source, toneMapping: toneMapping, keepsSignal: keepsSignal, clamped: !graph.transparent)
        sourceColor.dolbyVision = self.dolbyVision
        // Kept HDR goes back to Y'CbCr through the source's own matrix and range.
        let fromRGB = (keepsSignal ? YUVColorSpace(matrix: source.matrix, fullRange: source.fullRange)
                       : YUVColorSpace(matrix: .bt709, fullRange: false)).fromRGB()
        let uniforms = FrameUniforms(geometry: g, toRGB: graph.scalesYCbCr ? identityColorMap : source.toRGB(),
                                     toOutput: graph.scalesYCbCr ? composed(source.toRGB(), then: fromRGB) : fromRGB,
                                     lumaTexels: planes[0].width, chromaTexels: planes[1].width)
        // Compute needs GLES 3.1, pixel buffers to write into and the 8-bit NV12 writer.
        let canCompute = transfer.computePass == true && transfers != nil && !keepsSignal && GLContext.currentVersion >= (3, 1)
        if canCompute {
            let rowBytes = 4 * ((g.outputWidth + 3) / 4)
            nv12Layout = (rowBytes, rowBytes * 2 * (g.outputHeight / 2), rowBytes * 3 * (g.outputHeight / 2))
        }
        let inputs = ProgramInputs(graph: graph, sourceColor: sourceColor, uniforms: uniforms, limits: limits,
                                   precise: job.precise, tenBit: keepsSignal, canCompute: canCompute)
        passes = graph.programs
        switch graph.execution {
        case .chain: try makeChainPrograms(inputs, writesNV12: writesNV12)
        case .planeBlur(let sigma, let radius): try makePlaneBlur(inputs, sigma: sigma, radius: radius)
        case .cpuPlanes, .cpuBlocks, .cpuPlaneBlur: preconditionFailure("planned above")
        default: try makeFusedPrograms(inputs)
        }
        if keepsSignal, let target = nv12 ?? conversion.first?.target ?? fast.first?.target, !target.readsShorts {
            throw GPUEncodeError(.gpu, "this GPU cannot read 16-bit integer targets as GL_UNSIGNED_SHORT, which --hdr keep with filters needs")
        }
        if toneMapping.peakDetect && source.transfer.isHDR && !keepsSignal {
            detector = try PeakDetector(width: g.sourceWidth, height: g.sourceHeight,
                                        sourceGLSL: FrameRenderer.sourceUniforms(SourceSampling(bits: g.bitDepth)) + sourceColor.glsl,
                                        packed: packed, targetPeak: toneMapping.targetPeak,
                                        ceiling: sourceColor.sourcePeakNits / toneMapping.targetPeak, setUp: uniforms.set(on:))
        }
        try FrameRenderer.checkError("setting up the renderer")
    }

    /// The source planes' textures: R8 (R16UI for deep sources) per plane, or (`packed`) four
    /// samples per RGBA8 (RGBA16UI) texel. Luma is read with texelFetch per pixel and bilinearly
    /// (2x2 averages) by the chroma pass; deep sources, as integer textures, only with texelFetch.
    static func sourceTextures(_ g: RenderGeometry, packed: Bool) -> [Texture] {
        let deep = g.bitDepth > 8
        let sizes = [(g.sourceWidth, g.sourceHeight), (g.chromaWidth, g.chromaHeight), (g.chromaWidth, g.chromaHeight)]
        if packed {
            let format = GLenum(deep ? GL_RGBA16UI : GL_RGBA8)
            return sizes.map { Texture(width: ($0.0 + 3) / 4, height: $0.1, format: format, filter: GL_NEAREST) }
        }
        let (format, filter) = deep ? (GLenum(GL_R16UI), GL_NEAREST) : (GLenum(GL_R8), GL_LINEAR)
        return sizes.map { Texture(width: $0.0, height: $0.1, format: format, filter: filter) }
    }

    /// The plan runs on the CPU (`RenderExecution.runsOnCPU`): it made no GL object and needs no GL context.
    public var runsOnCPU: Bool { hostPlanes != nil }

    deinit {
        if vao != 0 { glDeleteVertexArrays(1, &vao) }
    }


    /// The filtered picture as RGBA instead of Y'CbCr (previews), on a renderer made with a path
    /// other than `.direct` (so the chain ends in an RGBA texture).
    public func renderRGBA(source: [Plane], time: Double = 0) throws -> RGBAImage {
        guard let chain else { preconditionFailure("renderRGBA needs the viaRGBA or unfused path") }
        upload(source)
        try applyDolbyVision()
        defer { frameIndex += 1 }
        let result = chain.render(time: time, frameIndex: frameIndex)
        let pixels: [UInt8]
        if result.format == GLenum(GL_RGBA8) {
            var bytes = [UInt8](repeating: 0, count: result.width * result.height * 4)
            glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), result.fbo)
            glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
            glReadPixels(0, 0, GLsizei(result.width), GLsizei(result.height), GLenum(GL_RGBA), GLenum(GL_UNSIGNED_BYTE), &bytes)
            pixels = bytes
        } else {
            // A deep source's chain ends in half float: rounded to bytes here (a preview is 8-bit).
            // (Linear light is encoded again here, as the conversions to Y'CbCr do; alpha stays linear.)
            let values = result.readRGBA(width: result.width, height: result.height)
            pixels = values.indices.map { i in
                var v = min(max(values[i], 0), 1)
                if light == .linear && i % 4 != 3 { v = v < 0.018 ? 4.5 * v : 1.099 * pow(v, 0.45) - 0.099 }
                return UInt8(min(max((v * 255).rounded(), 0), 255))
            }
        }
        try FrameRenderer.checkError("rendering a preview")
        return RGBAImage(width: result.width, height: result.height, pixels: pixels)
    }

    /// Starts a frame on the pipelined path: upload, draw and a queued readback, without waiting.
    /// Frames are collected in order once later frames have been submitted: by `collect`, or by
    /// giving a later `submit` the oldest frame's output (`collectingOldestInto`), which waits for
    /// that frame first and runs its copy out and this frame's copy in as one parallel pass, then
    /// this frame's GL calls. `source` nil: the source planes are on the GPU already
    /// (`sourcePlanes`, rendered by the deinterlacer).
    func submit(source: [Plane]?, time: Double = 0, collectingOldestInto oldest: [Plane]? = nil) throws {
        guard let transfers else { preconditionFailure("submit needs pixel buffers (canPipeline)") }
        var plan = CopyPlan()
        let collected = oldest.flatMap { stageCollect(into: $0, plan: &plan) }
        precondition(pendingReads.count < readSets)
        let upload = source.map { transfers.stageUpload(textures: planes, planes: $0.map { (UnsafeRawPointer($0.data), $0.stride) }, into: &plan) }
        plan.run(workers: transfers.copyThreads)
        if let collected {
            transfers.unmapReads(collected)
            try FrameRenderer.checkError("reading a frame back")
        }
        if let upload { transfers.commitUpload(upload) } else { bindSourcePlanes() }
        try draw(time: time)
        frameIndex += 1
        queueReadback()
        // Sends this frame's commands now: the next call looks at the oldest frame's fence without
        // waiting (a wait would send them), and a fence never sent never passes.
        glFlush()
        try FrameRenderer.checkError("rendering a frame")
    }

    /// Waits for the oldest submitted frame and copies it into `output` (Y and CbCr).
    func collect(into output: [Plane]) throws {
        guard let transfers else { return }
        var plan = CopyPlan()
        guard let collected = stageCollect(into: output, plan: &plan) else { return }
        plan.run(workers: transfers.copyThreads)
        transfers.unmapReads(collected)
        try FrameRenderer.checkError("reading a frame back")
    }

    /// The first half of `collect`: waits for the oldest submitted frame and adds the copies of its
    /// rows into `output` to `plan`. Returns the read buffers to hand back (`unmapReads`) once the
    /// plan has run; nil when no frame is pending.
    private func stageCollect(into output: [Plane], plan: inout CopyPlan) -> [Int]? {
        guard let transfers, !pendingReads.isEmpty else { return nil }
        let base = 3 + 3 * pendingReads.removeFirst()
        let target = nv12!
        let y = output[0]
        if writesTenBit {
            return transfers.stageTenBitReads(tenBitReads(output).enumerated().map { (base + $0, $1) }, target: target, into: &plan)
        }
        if computeBlocks {
            let layout = nv12Layout
            return transfers.stageShaderRead(base, size: layout.size, sourceStride: layout.rowBytes, rowBytes: geometry.outputWidth,
                                             planes: [(0, 2 * target.height, y.data, y.stride),
                                                      (layout.chromaOffset, target.height, output[1].data, output[1].stride)],
                                             into: &plan)
        }
        return transfers.stageReads([(base, y.data, 2 * y.stride), (base + 1, y.data + y.stride, 2 * y.stride),
                                     (base + 2, output[1].data, output[1].stride)], target: target, rowBytes: geometry.outputWidth,
                                    into: &plan)
    }

    private func queueReadback() {
        guard let transfers else { return }
        let set = nextReadSet
        nextReadSet = (nextReadSet + 1) % readSets
        if computeBlocks {
            transfers.endShaderWrite(3 + 3 * set)
        } else {
            for a in 0..<3 { transfers.startRead(3 + 3 * set + a, target: nv12!, attachment: a, tenBit: writesTenBit) }
        }
        pendingReads.append(set)
    }

    /// Uploads `source` into the source planes, or into `textures` laid out like them (`makeSourcePlanes`).
    private func upload(_ source: [Plane], into textures: [Texture]? = nil) {
        let planes = textures ?? self.planes
        if let transfers {
            transfers.upload(textures: planes, planes: source.map { (UnsafeRawPointer($0.data), $0.stride) })
            return
        }
        for (i, t) in planes.enumerated() {
            glActiveTexture(GLenum(Int(GL_TEXTURE0) + i))
            if packed {
                t.uploadPacked(source[i].data, stride: source[i].stride, scratch: &scratch)
            } else {
                t.upload(source[i].data, stride: source[i].stride, scratch: &scratch)
            }
        }
    }

    /// The Dolby Vision RPU of the frames drawn from now on (a renderer made with `dolbyVision`).
    /// A frame without one keeps the last: RPUs describe scenes and may be left out between them.
    /// One the shader cannot hold (`DolbyVisionReshape.fits`) is skipped the same way.
    public func setDolbyVision(_ rpu: DolbyVisionRPU) {
        guard DolbyVisionReshape.fits(rpu) else { return }
        nextRPU = rpu
    }

    /// Sets the next frame's RPU on every program that reads the source, when it changed.
    private func applyDolbyVision() throws {
        guard let dolbyVision, let rpu = nextRPU, rpu != appliedRPU else { return }
        for (program, _, _) in fast { dolbyVision.set(rpu, on: program) }
        try baked?.rebake { dolbyVision.set(rpu, on: $0) }
        chain?.forEveryProgram { dolbyVision.set(rpu, on: $0) }
        if let detector { dolbyVision.set(rpu, on: detector.measuringProgram) }
        appliedRPU = rpu
    }

    private func draw(time: Double) throws {
        try applyDolbyVision()
        try baked?.update(time: time)
        if let detector {
            // This frame's peak, measured before it is tone-mapped.
            let peak = Float(detector.measure())
            for (program, _, _) in fast {
                program.use()
                program.set("detectedPeak", peak)
            }
            chain?.setEveryProgram("detectedPeak", peak)
        }
        if let planeBlur {
            planeBlur.render { runBlocks($0) }
            return
        }
        if let chain {
            let result = chain.render(time: time, frameIndex: frameIndex)
            if let scaledChroma {
                scaledChroma.render(from: result.textures[0])
                glActiveTexture(GLenum(GL_TEXTURE1))
                glBindTexture(GLenum(GL_TEXTURE_2D), scaledChroma.texture.id)
            }
            glActiveTexture(GLenum(GL_TEXTURE0))
            glBindTexture(GLenum(GL_TEXTURE_2D), result.textures[0].id)
            for (program, target) in conversion {
                program.use()
                runBlocks(target)
            }
            return
        }
        for (program, target, bindings) in fast {
            program.use()
            program.set("time", Float(time))
            program.set("frameIndex", Float(frameIndex))
            if bindings.isDynamic { bindings.refresh(time: time) }
            bindings.bind()
            if bindings.isAnimated { bindings.update(time: time) }
            runBlocks(target)
        }
    }

    /// Runs the program in use over `target`: drawn into it, or (`computeBlocks`) dispatched a block
    /// per invocation into the read set `queueReadback` takes next.
    private func runBlocks(_ target: RenderTarget) {
        if computeBlocks, let transfers {
            transfers.bindForShaderWrite(3 + 3 * nextReadSet, size: nv12Layout.size)
            let group = FrameRenderer.computeGroup
            glDispatchCompute(GLuint((target.width + group.x - 1) / group.x), GLuint((target.height + group.y - 1) / group.y), 1)
        } else {
            target.bind()
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        }
    }

    /// Reads the NV12 target into `output` (Y, CbCr) through client memory. Even and odd rows come
    /// from two attachments: each fills every other row of the plane.
    private func readNV12(_ target: RenderTarget, into output: [Plane]) {
        let y = output[0]
        target.readPacked(0, into: y.data, stride: 2 * y.stride, width: geometry.outputWidth, scratch: &scratch)
        target.readPacked(1, into: y.data + y.stride, stride: 2 * y.stride, width: geometry.outputWidth, scratch: &scratch)
        target.readPacked(2, into: output[1].data, stride: output[1].stride, width: geometry.outputWidth, scratch: &scratch)
    }

    /// `render` for an 8-bit NV12 output, stage by stage into `times` (`StageTimes`), one frame at a time.
    public func renderMeasured(source: [Plane], output: [Plane], times: StageTimes) throws {
        if hostPlanes != nil {
            times.begin(.draw); try render(source: source, output: output); times.end(.draw)
            times.endFrame()
            return
        }
        guard let target = nv12, !writesTenBit else { return try render(source: source, output: output) }
        times.begin(.upload); upload(source); times.end(.upload)
        times.begin(.draw); try draw(time: 0); times.end(.draw)
        frameIndex += 1
        if transfers != nil {
            times.begin(.readback); queueReadback(); times.end(.readback)
            times.begin(.collect); try collect(into: output); times.end(.collect)
        } else {
            // Client memory: glReadPixels waits for the copy, so the whole readback is one stage.
            times.begin(.readback); readNV12(target, into: output); times.end(.readback)
            times.begin(.collect); times.end(.collect)
        }
        times.endFrame()
        try FrameRenderer.checkError("rendering a frame")
    }

    /// Renders one frame at `time` seconds and reads it back before returning: `source` holds the
    /// Y, Cb, Cr planes; `output` receives Y, Cb, Cr, or Y and CbCr when `writesNV12`.
    /// `source` nil: the source planes are on the GPU already (`sourcePlanes`).
    func render(source: [Plane]?, output: [Plane], time: Double = 0) throws {
        if let hostPlanes {
            guard let source else { throw GPUEncodeError(.gpu, "the CPU plan was given frames on the GPU") }
            hostPlanes.render(source, into: output, time: time)
            frameIndex += 1
            return
        }
        precondition((source?.count ?? 3) == 3 && output.count == (nv12 != nil && !writesTenBit ? 2 : 3) && pendingReads.isEmpty)
        if let source { upload(source) } else { bindSourcePlanes() }
        try draw(time: time)
        frameIndex += 1
        if writesTenBit {
            if transfers != nil {
                queueReadback()
                try collect(into: output)
            } else {
                let targets = nv12.map { [$0, $0, $0] } ?? chain.map { _ in [conversion[0].target, conversion[1].target, conversion[1].target] }
                    ?? [fast[0].target, fast[1].target, fast[1].target]
                for (i, rows) in tenBitReads(output).enumerated() {
                    targets[i].readTenBit(nv12 != nil ? i : i == 2 ? 1 : 0, into: rows, scratch: &scratch16)
                }
            }
        } else if let target = nv12 {
            if transfers != nil {
                queueReadback()
                try collect(into: output)
            } else {
                readNV12(target, into: output)
            }
        } else if chain != nil {
            conversion[0].target.readPlane(0, into: output[0].data, stride: output[0].stride, scratch: &scratch)
            conversion[1].target.readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
            conversion[1].target.readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        } else {
            fast[0].target.readPacked(0, into: output[0].data, stride: output[0].stride, width: geometry.outputWidth, scratch: &scratch)
            fast[1].target.readPlane(0, into: output[1].data, stride: output[1].stride, scratch: &scratch)
            fast[1].target.readPlane(1, into: output[2].data, stride: output[2].stride, scratch: &scratch)
        }
        try FrameRenderer.checkError("rendering a frame")
    }

    /// Where each 10-bit target's rows go in a yuv420p10le frame (`output`: Y, Cb, Cr): with the
    /// NV12 block, its three attachments (even Y rows, odd Y rows, Cb/Cr interleaved); otherwise
    /// the Y target, then the Cb and Cr attachments of the chroma target.
    private func tenBitReads(_ output: [Plane]) -> [TenBitRows] {
        let (w, cw) = (geometry.outputWidth, geometry.outputWidth / 2)
        let (y, cb, cr) = (UnsafeMutableRawPointer(output[0].data), UnsafeMutableRawPointer(output[1].data), UnsafeMutableRawPointer(output[2].data))
        if nv12 != nil {
            return [.samples(y, stride: 2 * output[0].stride, count: w), .samples(y + output[0].stride, stride: 2 * output[0].stride, count: w),
                    .interleaved(cb: cb, cr: cr, stride: output[1].stride, count: cw)]
        }
        let luma: TenBitRows = chain != nil ? .first(y, stride: output[0].stride, count: w) : .samples(y, stride: output[0].stride, count: w)
        return [luma, .first(cb, stride: output[1].stride, count: cw), .first(cr, stride: output[2].stride, count: cw)]
    }

    // MARK: Source planes already on the GPU (the deinterlacer renders them)

    /// The textures the passes read the source from (units 0, 1, 2): Y, Cb, Cr, as R8 or packed
    /// four samples per RGBA8 texel.
    var sourcePlanes: [Texture] { planes }

    /// Three new textures laid out as `sourcePlanes`, for a history of uploaded frames.
    func makeSourcePlanes() -> [Texture] {
        planes.map { Texture(width: $0.width, height: $0.height, format: $0.format, filter: GL_NEAREST) }
    }

    /// Uploads a frame's planes into textures from `makeSourcePlanes`, the way frames are uploaded.
    func upload(_ source: [Plane], to textures: [Texture]) {
        upload(source, into: textures)
    }

    /// Binds the source planes to units 0, 1, 2 (another pass may have used those units).
    private func bindSourcePlanes() {
        for (i, t) in planes.enumerated() {
            glActiveTexture(GLenum(Int(GL_TEXTURE0) + i))
            glBindTexture(GLenum(GL_TEXTURE_2D), t.id)
        }
    }

    static func checkError(_ what: String) throws {
        let e = glGetError()
        // Sizes and limits are checked before any GL call, so an error here is ours (or the driver's).
        guard e == GL_NO_ERROR else { throw GPUEncodeError(.internal, "OpenGL error 0x\(String(e, radix: 16)) while \(what)") }
    }
}
