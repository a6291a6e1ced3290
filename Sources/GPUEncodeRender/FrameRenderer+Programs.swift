import CEGL
import GPUEncodeCore
import GPUEncodeFilters

// Making the programs a compiled graph says: the fused passes (source planes straight to output
// planes) or the chain through RGBA textures and its conversion to Y'CbCr. `init` compiles the
// graph and calls one of these; what they make is what `draw` runs.
extension FrameRenderer {
    /// What both kinds of programs are made from.
    struct ProgramInputs {
        let graph: RenderGraph
        let sourceColor: SourceColorShader
        let uniforms: FrameUniforms
        let limits: GPULimits
        /// 8-bit rounding between filters off: deep sources, linear light, kept HDR.
        let precise: Bool
        let tenBit: Bool
        /// The NV12 block pass may be a compute shader (GLES 3.1, pixel buffers, 8-bit out).
        let canCompute: Bool

        var linear: Bool { graph.nodes.contains { if case .linearLight = $0.kind { return true } else { return false } } }
        var bitDepth: Int { uniforms.geometry.bitDepth }
        /// Output target formats: 8-bit codes, or 10-bit codes on RGBA16UI targets.
        var rgba8: GLenum { GLenum(tenBit ? GL_RGBA16UI : GL_RGBA8) }
        var r8: GLenum { GLenum(tenBit ? GL_RGBA16UI : GL_R8) }

        /// The writers: 8-bit (dithered for deep sources) or 10-bit codes (`writerOutputGLSL`); the
        /// chroma kernels by what the source's chroma was (ChromaDecimator.swift).
        func writer(_ glsl: String) -> String {
            ChromaDecimator(for: uniforms.geometry).defined(in: FrameRenderer.defining(tenBit ? "TEN_BIT_OUT" : "DITHER", in: glsl, tenBit || bitDepth > 8))
        }
    }

    /// A block pass (`blockEntry`): compute when `computeBlocks`, else fragment.
    private func blockProgram(_ glsl: String, label: String) throws -> ShaderProgram {
        guard computeBlocks else { return try ShaderProgram(fragment: glsl, label: label) }
        let program = try ShaderProgram(compute: FrameRenderer.asCompute(glsl), label: label + ", compute")
        program.use()
        program.set("nv12RowWords", int: Int32(nv12Layout.rowBytes / 4))
        program.set("nv12ChromaWord", int: Int32(nv12Layout.chromaOffset / 4))
        glUniform2i(program.location("blockCount"), GLint((geometry.outputWidth + 3) / 4), GLint(geometry.outputHeight / 2))
        return program
    }

    /// The fused passes: the whole point chain in the program(s) that read the source planes and
    /// write the output planes.
    func makeFusedPrograms(_ p: ProgramInputs) throws {
        let (w, h) = (geometry.outputWidth, geometry.outputHeight)
        let rendered = p.graph.renderedFilters
        let owners = rendered.enumerated().flatMap { FilterCodegen.uniformOwners($1, prefix: "f\($0)_") }
        let prelude = FrameRenderer.defining("LINEAR_LIGHT", in: FrameRenderer.prelude(rendered, color: p.sourceColor, roundTo8Bits: !p.precise, sampling: SourceSampling(bits: p.bitDepth)), p.linear)
        var resources: [String: [String: ResourceTexture]] = [:]
        // Baked colour: the table is sized against the exact prelude on this GPU; none within the
        // bound leaves the exact chain.
        if p.graph.bakesColour {
            baked = try BakedColour.make(exact: prelude, filters: rendered, owners: owners, color: p.sourceColor, bits: p.bitDepth, tenBit: p.tenBit,
                                         roundsTo8Bits: !p.precise, compile: compile, setUp: p.uniforms.set(on:), resources: &resources, passes: &passes)
        }
        let (fused, fusedOwners) = baked.map { ($0.prelude, []) } ?? (prelude, owners)
        var made: [(ShaderProgram, RenderTarget)] = []
        if packed {
            let main = p.graph.execution == .planeNativeBlocks ? PlaneNativeShaders.packedBlockMain : FrameRenderer.packedBlockMain
            let glsl = p.writer(fused + main)
            // No fused filter may read gl_FragCoord in a compute pass.
            computeBlocks = p.canCompute && !fused.contains("gl_FragCoord")
            made = [(try blockProgram(glsl, label: "Y'CbCr (filters fused)"),
                     try RenderTarget(width: (w + 3) / 4, height: h / 2, formats: [p.rgba8, p.rgba8, p.rgba8]))]
        } else {
            made = [
                (try ShaderProgram(fragment: p.writer(fused + FrameRenderer.directLumaMain), label: "luma (filters fused)"),
                 try RenderTarget(width: (w + 3) / 4, height: h, formats: [p.rgba8])),
                (try ShaderProgram(fragment: p.writer(fused + FrameRenderer.directChromaMain), label: "chroma (filters fused)"),
                 try RenderTarget(width: w / 2, height: h / 2, formats: [p.r8, p.r8])),
            ]
        }
        for (program, target) in made {
            p.uniforms.set(on: program)
            baked?.setUp(program)
            fast.append((program, target, try FilterBindings(program: program, owners: fusedOwners, resources: &resources,
                                                             inputSize: (geometry.uprightWidth, geometry.uprightHeight))))
        }
        if packed { nv12 = made[0].1 }
    }

    /// The chain through RGBA textures (`ChainRenderer`), then its conversion to NV12 or to Y and CbCr planes.
    func makeChainPrograms(_ p: ProgramInputs, writesNV12: Bool) throws {
        let g = geometry
        let (w, h) = (g.outputWidth, g.outputHeight)
        let rendered = p.graph.renderedFilters
        // textureGather where the context has it (ES 3.1: llvmpipe and NVIDIA give 3.2 for the
        // 3.0 context asked for); the same values by texelFetch otherwise.
        let gathers = GLContext.currentVersion >= (3, 1)
        let sampling = SourceSampling(bits: g.bitDepth, bilinear: gathers ? .gathered : .exact)
        var chainSource = ChainSource(glsl: FrameRenderer.chainSource(light: light, color: p.sourceColor, sampling: sampling),
                                      width: g.uprightWidth, height: g.uprightHeight, setUp: p.uniforms.set(on:))
        chainSource.es31 = gathers
        if light != .linear { chainSource.quadGLSL = chainSource.glsl + FrameRenderer.sourceQuad(gathers: gathers, deep: g.bitDepth > 8) }
        let chain = try ChainRenderer(source: chainSource, filters: rendered, fuse: path != .unfused,
                                      deep: p.precise || (p.graph.transparent && !p.graph.scalesYCbCr),
                                      limits: p.limits, endsReduced: writesNV12)
        self.chain = chain
        passes = chain.chainPlan.description
        if let ratio = FrameRenderer.outputScaleRatio(rendered, geometry: g) {
            scaledChroma = try ScaledChroma(width: w, height: h, ratio: ratio, linear: p.linear)
            passes += ScaledChroma.passLines(after: passes.count)
        }
        let scaled = scaledChroma != nil
        if writesNV12 {
            // One pass from the chain's RGBA to NV12, a 4x2 block per fragment.
            let reads = scaled ? FrameRenderer.nv12FromScaled : chain.reducedOutput?.divisor == 4 ? FrameRenderer.nv12FromReduced4
                : chain.reducedOutput != nil ? FrameRenderer.nv12FromReduced : FrameRenderer.nv12FromRGBA
            computeBlocks = p.canCompute
            let program = try blockProgram(FrameRenderer.defining("LINEAR_LIGHT", in: p.writer(reads), p.linear), label: "RGB to NV12")
            let target = try RenderTarget(width: (w + 3) / 4, height: h / 2, formats: [p.rgba8, p.rgba8, p.rgba8])
            conversion = [(program, target)]
            nv12 = target
        } else {
            conversion = [
                (try ShaderProgram(fragment: FrameRenderer.defining("LINEAR_LIGHT", in: p.writer(FrameRenderer.lumaFromRGBA), p.linear), label: "RGB to Y"),
                 try RenderTarget(width: w, height: h, formats: [p.r8])),
                (try ShaderProgram(fragment: scaled ? p.writer(FrameRenderer.chromaFromScaled)
                                                    : FrameRenderer.defining("LINEAR_LIGHT", in: p.writer(FrameRenderer.chromaFromRGBA), p.linear), label: "RGB to CbCr"),
                 try RenderTarget(width: w / 2, height: h / 2, formats: [p.r8, p.r8])),
            ]
        }
        for (program, _) in conversion {
            p.uniforms.set(on: program)
            glUniform2i(program.location("rgbaMax"), GLint(chain.outputWidth - 1), GLint(chain.outputHeight - 1))
            if writesNV12 { chain.setReducedUniforms(program) }
            program.set("chromaTex", int: 1)
        }
    }

    /// A large Gaussian blur alone on the planes (`PlaneBlur`), written to NV12 by its last pass.
    func makePlaneBlur(_ p: ProgramInputs, sigma: Double, radius: Int) throws {
        let blur = try PlaneBlur(geometry: geometry, sigma: sigma, radius: radius, planes: planes, writer: p.writer, setUp: p.uniforms.set(on:))
        planeBlur = blur
        nv12 = blur.output.target
    }
}
