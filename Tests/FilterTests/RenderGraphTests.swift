@testable import GPUEncodeRender
import GPUEncodeCore
import GPUEncodeFilters
import XCTest

/// The render compiler's passes on graphs, without a GPU: what each inserts, moves, decides and
/// groups, read from the nodes (`RenderGraph`), as `--passes` prints them.
final class RenderGraphTests: FilterTestCase {
    private let sdr = YUVColorSpace(matrix: .bt709, fullRange: false)
    private let hlg = YUVColorSpace(matrix: .bt2020, fullRange: false, transfer: .hlg, primaries: .bt2020)

    private func job(_ filters: [FilterInstance], width: Int = 1920, height: Int = 1080, bits: Int = 8, rotation: Rotation = .none,
                     source: YUVColorSpace? = nil, light: FilterLight = .gamma, keep: Bool = false, path: RenderPath = .direct,
                     cost: CostModel = .software) -> RenderJob {
        let g = RenderGeometry(sourceWidth: width, sourceHeight: height, chromaShiftX: 1, chromaShiftY: 1, rotation: rotation,
                               bitDepth: bits, filters: filters)
        return RenderJob(geometry: g, source: source ?? sdr, filters: filters, path: path, light: light, keepsSignal: keep,
                         limits: .es30Minimum, cost: cost)
    }

    private func compiled(_ job: RenderJob, _ options: CompileOptions = CompileOptions()) throws -> RenderCompiler.Result {
        try RenderCompiler(options: options).compile(job)
    }

    /// The node after `pass` has run, one description per node.
    private func nodes(_ result: RenderCompiler.Result, after pass: String) -> [String] {
        guard let step = result.trace.first(where: { $0.pass.hasPrefix(pass) }) else { return [] }
        return step.graph.nodes.map { node in
            var plain = node
            plain.program = nil
            return plain.description
        }
    }

    private func sepia() throws -> FilterInstance { try filter("sepia") }
    private func scale(_ w: Int, _ h: Int) -> [FilterInstance] { ScaleFilter.instances(width: w, height: h) }

    func testTheJobIsSourceFiltersScaleOutput() throws {
        let r = try compiled(job([try sepia()] + scale(1280, 720)))
        XCTAssertEqual(nodes(r, after: "the job"), [
            "source 1920x1080, 8-bit 4:2:0", "filter 1: sepia (point)", "scale to 1280x720 (GPU, Lanczos passes)",
            "output 8-bit Y'CbCr 4:2:0, BT.709 limited range",
        ])
        XCTAssertEqual(r.graph.renderedFilters.map(\.declaration.name), ["sepia", ScaleFilter.name, ScaleFilter.name])
    }

    func testIdentityChainsDropTheirFiltersAndStayUnclamped() throws {
        let r = try compiled(job([try filter("identity"), try filter("identity")]))
        XCTAssertTrue(r.graph.transparent)
        XCTAssertFalse(r.graph.nodes.contains { $0.filter != nil })
        let s = try compiled(job([try filter("identity"), try sepia()]))
        XCTAssertFalse(s.graph.transparent)
        XCTAssertEqual(s.graph.nodes.filter { $0.filter != nil }.count, 2)
    }

    func testConversionsForAnSDRSource() throws {
        let r = try compiled(job([try sepia()]))
        XCTAssertEqual(nodes(r, after: "insert conversions"), [
            "source 1920x1080, 8-bit 4:2:0", "Y'CbCr to R'G'B' (bt709, limited range)", "filter 1: sepia (point)",
            "R'G'B' to Y'CbCr (bt709, limited range)", "chroma decimation (inverse of the linear upsampling)",
            "output 8-bit Y'CbCr 4:2:0, BT.709 limited range",
        ])
    }

    func testConversionsForHDRTenBit() throws {
        let tonemapped = nodes(try compiled(job([try sepia()], bits: 10, source: hlg)), after: "insert conversions")
        XCTAssertEqual(tonemapped[1], "Y'CbCr to R'G'B' (bt2020, limited range)")
        XCTAssertTrue(tonemapped[2].hasPrefix("source colour: HLG bt2020 to linear, bt2020 to BT.709 primaries, tone map (bt2390"), tonemapped[2])
        XCTAssertTrue(tonemapped.contains("dither to 8 bits"), "\(tonemapped)")
        // Kept HDR: no conversion of the signal, no dither, back through the source's own matrix.
        let kept = nodes(try compiled(job([try sepia()], bits: 10, source: hlg, keep: true)), after: "insert conversions")
        XCTAssertFalse(kept.contains { $0.hasPrefix("source colour") || $0 == "dither to 8 bits" }, "\(kept)")
        XCTAssertTrue(kept.contains("R'G'B' to Y'CbCr (bt2020, limited range)"), "\(kept)")
    }

    func testLinearLightWrapsTheFiltersNotTheScale() throws {
        let list = nodes(try compiled(job([try sepia()] + scale(960, 540), light: .linear)), after: "insert conversions")
        let into: Int = list.firstIndex(of: "to linear light") ?? -1
        let out: Int = list.firstIndex(of: "from linear light") ?? -1
        let filter: Int = list.firstIndex(of: "filter 1: sepia (point)") ?? -1
        let scaled: Int = list.firstIndex { $0.hasPrefix("scale to") } ?? -1
        XCTAssertEqual([into, filter, out, scaled].sorted(), [into, filter, out, scaled], "\(list)")
        XCTAssertGreaterThan(into, 0)
    }

    /// A transparent 8-bit chain with a scale carries Y'CbCr codes through it: the matrix after the scale.
    func testTransparentScaleRunsOnYCbCr() throws {
        let r = try compiled(job([try filter("identity")] + scale(960, 540)))
        XCTAssertTrue(r.graph.scalesYCbCr)
        let list = nodes(r, after: "insert conversions")
        XCTAssertLessThan(list.firstIndex { $0.hasPrefix("scale to") }!, list.firstIndex { $0.hasPrefix("Y'CbCr to R'G'B'") }!, "\(list)")
        XCTAssertFalse(try compiled(job([try filter("identity")] + scale(960, 540), bits: 10)).graph.scalesYCbCr)
    }

    func testExecutionFollowsTheChainAndTheLayout() throws {
        XCTAssertEqual(try compiled(job([try sepia()]), .reference).graph.execution, .packedBlocks)
        XCTAssertEqual(try compiled(job([try sepia()], rotation: .clockwise90)).graph.execution, .lumaAndChroma)
        XCTAssertEqual(try compiled(job([try filter("gaussianBlur")])).graph.execution, .chain)
        XCTAssertEqual(try compiled(job([try sepia()], path: .viaRGBA)).graph.execution, .chain)
        XCTAssertEqual(try compiled(job([try sepia()] + scale(960, 540))).graph.execution, .chain)
    }

    /// Every node of a chain is given the pass that runs it, as the plan's lines number them.
    func testFusingNumbersThePasses() throws {
        let r = try compiled(job([try sepia(), try filter("gaussianBlur"), try filter("vignette")]))
        let programs = Dictionary(uniqueKeysWithValues: r.graph.nodes.compactMap { node in node.filter.map { ($0.declaration.name, node.program!) } })
        XCTAssertEqual(programs["sepia"], 0)
        XCTAssertEqual(programs["gaussianBlur"], 1)
        XCTAssertEqual(programs["vignette"], 1, "a point filter after a blur fuses into the blur's last pass")
        XCTAssertEqual(r.graph.nodes.first { if case .toYCbCr = $0.kind { return true } else { return false } }?.program, RenderNode.conversionPass)
        XCTAssertEqual(r.graph.programs.count, 2)
        XCTAssertTrue(r.graph.programs[1].hasPrefix("pass 2: gaussianBlur, vignette"), r.graph.programs[1])
    }

    /// `--passes` shows the job and the graph after every pass, the optional ones marked; the
    /// reference runs only the required passes.
    func testTraceShowsEveryPassAndTheReferenceOnlyTheRequired() throws {
        let r = try compiled(job([try sepia()]))
        XCTAssertEqual(r.trace.map(\.pass).first, "the job")
        XCTAssertEqual(r.trace.count, RenderCompiler.passes.count + 1)
        XCTAssertTrue(r.traceText.contains("insert conversions:"))
        let reference = try compiled(job([try sepia()]), .reference)
        XCTAssertEqual(reference.trace.count, RenderCompiler.passes.filter { !$0.isOptional }.count + 1)
        XCTAssertFalse(reference.trace.contains { $0.pass.hasSuffix("(optional)") })
    }

    /// Scale first, decided by the pipeline before the upload, shows in the graph: the moved scale
    /// right after the (coded, unscaled) source, ahead of the filters; a scale that stays says why.
    func testScaleFirstShowsWhereTheScaleRuns() throws {
        let chain = [try sepia()] + scale(1280, 720)
        var facts = ScaleFirst.Facts(sourceWidth: 1920, sourceHeight: 1080, rotation: .none, bitDepth: 8, softwareRenderer: true)
        let moved = ScaleFirst(filters: chain, facts: facts, options: CompileOptions())
        XCTAssertTrue(moved.movesScale)
        var scaledJob = job(moved.gpuFilters(chain), width: 1280, height: 720)
        scaledJob.scaleFirst = moved
        let list = nodes(try compiled(scaledJob), after: "scale first")
        XCTAssertEqual(Array(list.prefix(3)), ["source 1920x1080, 8-bit 4:2:0", "scale to 1280x720 (swscale (lanczos) before the upload)",
                                               "filter 1: sepia (point)"])
        XCTAssertEqual(try compiled(scaledJob).graph.renderedFilters.map(\.declaration.name), ["sepia"])
        facts.softwareRenderer = false
        let stays = ScaleFirst(filters: chain, facts: facts, options: CompileOptions())
        var gpuJob = job(chain)
        gpuJob.scaleFirst = stays
        let graph = try compiled(gpuJob).graph
        XCTAssertTrue(graph.notes.contains { $0.contains("hardware GPU") }, "\(graph.notes)")
        XCTAssertTrue(graph.nodes[graph.scaleIndex!].description.contains("GPU, Lanczos passes"))
    }

    /// Plane-native chains and the blur on planes are optional passes that change the execution:
    /// sepia's block pass evaluates the chain per luma pixel and per chroma sample; a sigma-8 blur
    /// alone runs on the Y'CbCr planes, its matrix to R'G'B' moved after it. The reference keeps both.
    func testOptionalExecutionsAndTheReference() throws {
        XCTAssertEqual(try compiled(job([try sepia()]), CompileOptions(cpuKernels: false)).graph.execution, .planeNativeBlocks)
        XCTAssertEqual(try compiled(job([try sepia()]), .reference).graph.execution, .packedBlocks)
        XCTAssertEqual(try compiled(job([try filter("hue")]), CompileOptions(cpuKernels: false)).graph.execution, .packedBlocks,
                       "a look outside the plane-native set keeps the reference's block")
        // The set is what the maps are: a non-negative colour matrix that stretches no colour
        // difference qualifies, one with a negative share or a raised saturation does not.
        let warm = try filter("colorMatrix", ["matrix": .matrix4([0.9, 0.1, 0, 0, 0.05, 0.9, 0.05, 0, 0, 0.1, 0.8, 0, 0, 0, 0, 1])])
        let vivid = try filter("colorMatrix", ["matrix": .matrix4([1.2, -0.1, -0.1, 0, -0.1, 1.2, -0.1, 0, -0.1, -0.1, 1.2, 0, 0, 0, 0, 1])])
        XCTAssertEqual(try compiled(job([warm]), CompileOptions(cpuKernels: false)).graph.execution, .planeNativeBlocks)
        XCTAssertEqual(try compiled(job([vivid]), CompileOptions(cpuKernels: false)).graph.execution, .packedBlocks)
        XCTAssertEqual(try compiled(job([try filter("saturation", ["saturation": .float(1.3)])]), CompileOptions(cpuKernels: false)).graph.execution,
                       .packedBlocks)
        let blur = try filter("gaussianBlur", ["sigma": .float(8)])
        let r = try compiled(job([blur]), CompileOptions(cpuKernels: false))
        XCTAssertEqual(r.graph.execution, RenderExecution.planeBlur(sigma: 8, radius: 24))
        let list = nodes(r, after: "blur on planes")
        XCTAssertLessThan(list.firstIndex { $0.hasPrefix("filter 1: gaussianBlur") }!, list.firstIndex { $0.hasPrefix("Y'CbCr to R'G'B'") }!, "\(list)")
        XCTAssertEqual(r.graph.programs.count, 4)
        XCTAssertEqual(try compiled(job([blur]), .reference).graph.execution, .chain)
        XCTAssertEqual(try compiled(job([blur], bits: 10)).graph.execution, .chain, "10-bit sources keep the RGBA chain")
        // The plane blur on the CPU where the kernels run: the same grid, no GL program.
        let cpu = try compiled(job([blur]))
        XCTAssertEqual(cpu.graph.execution, RenderExecution.cpuPlaneBlur(sigma: 8, radius: 24))
        XCTAssertEqual(cpu.graph.programs.count, 1)
        XCTAssertTrue(cpu.graph.programs[0].hasPrefix("on the CPU: source Y'CbCr, gaussianBlur (sigma 8; chroma 4)"), cpu.graph.programs[0])
        XCTAssertTrue(cpu.graph.notes.contains { $0.hasPrefix("on the CPU: estimated") }, "\(cpu.graph.notes)")
        let noKernels = try compiled(job([blur], cost: CostModel.software.withHostKernels(false))).graph
        XCTAssertEqual(noKernels.execution, RenderExecution.planeBlur(sigma: 8, radius: 24))
        XCTAssertTrue(noKernels.notes.contains { $0.hasPrefix("on the CPU: no, this CPU cannot run the kernels") }, "\(noKernels.notes)")
        XCTAssertTrue(r.graph.notes.contains { $0.hasPrefix("on the CPU: no, kept on the renderer") }, "\(r.graph.notes)")
        // On a GPU the blur on planes measured 2.1x the chain's time (H100): the chain stays.
        XCTAssertEqual(try compiled(job([blur], cost: .hardware)).graph.execution, .chain)
    }

    /// The plane-native pass on the CPU: chosen where the cost model puts the CPU kernels under the
    /// renderer's pass (a software rasteriser, a CPU that runs them) for affine chains on 8-bit SDR;
    /// everything else keeps its plan, and says why.
    func testRunOnCPU() throws {
        let sepia = try sepia()
        let r = try compiled(job([sepia]))
        XCTAssertEqual(r.graph.execution, .cpuPlanes)
        XCTAssertEqual(r.graph.programs, ["on the CPU: source, sepia, to Y'CbCr (no GL program)"])
        XCTAssertTrue(r.graph.notes.contains { $0.hasPrefix("on the CPU: estimated") }, "\(r.graph.notes)")
        XCTAssertEqual(try compiled(job([sepia, try filter("colorControls", ["saturation": .float(0.8)])])).graph.execution, .cpuPlanes)
        XCTAssertEqual(try compiled(job([])).graph.execution, .cpuPlanes, "identity: the transparent round trip")
        // Outside plane-native's bar (a gain above 1, a curve): the reference's block pass on the CPU.
        let curve = try filter("toneCurve", ["rgb": .points([[0, 0], [0.25, 0.2], [0.75, 0.8], [1, 1]])])
        let blend = try filter("screen", ["opacity": .float(0.1)], with: try filter("solidColor", ["color": .vector([0.95, 0.42, 0.74, 1])]))
        // (The curve's table takes 260 uniform vectors: llvmpipe's limits.)
        var look = job([try filter("colorControls", ["saturation": .float(1.3)]), try filter("hueAdjust", ["angle": .float(0.3)]), blend, curve])
        look.limits = GPULimits(uniformVectors: 4096, textureUnits: 32, combinedTextureUnits: 192, drawBuffers: 8, maxTextureSize: 16384)
        let reference = try compiled(look)
        XCTAssertEqual(reference.graph.execution, .cpuBlocks)
        XCTAssertEqual(reference.graph.programs, ["on the CPU: source, colorControls, hueAdjust, screen, toneCurve, to Y'CbCr (no GL program)"])
        func stays(_ j: RenderJob, _ options: CompileOptions = CompileOptions(), because reason: String,
                   file: StaticString = #filePath, line: UInt = #line) throws {
            let g = try compiled(j, options).graph
            XCTAssertNotEqual(g.execution, .cpuPlanes, reason, file: file, line: line)
            if g.execution == .planeNativeBlocks || g.execution == .packedBlocks {
                XCTAssertTrue(g.notes.contains { $0.hasPrefix("on the CPU: no, \(reason)") }, "\(g.notes)", file: file, line: line)
            }
        }
        try stays(job([sepia], cost: .hardware), because: "estimated")
        try stays(job([sepia], cost: CostModel.software.withHostKernels(false)), because: "this CPU cannot run the kernels")
        try stays(job([sepia]), CompileOptions(cpuKernels: false), because: "kept on the renderer")
        XCTAssertEqual(try compiled(job([sepia]), .reference).graph.execution, .packedBlocks, "the reference runs no optional pass")
        try stays(job([sepia], bits: 10), because: "the source is deeper than 8 bits")
        try stays(job([sepia], source: hlg), because: "the source is not SDR")
        try stays(job([sepia], light: .linear), because: "the preset works in linear light")
        try stays(job([try filter("vignette")]), because: "vignette is neither an affine colour map nor a table per channel")
        try stays(job([try filter("screen", with: try filter("linearGradient"))]), because: "screen is neither")
        try stays(job([sepia], rotation: .clockwise90), because: "not a block pass")
        try stays(job([sepia], width: 1919, height: 1079), because: "an odd coded size")
        XCTAssertEqual(CostModel.software.host(evaluations: 100, filters: 2, lookups: 1), 100 * (0.5 + 2 * 0.65 + 2.0))
        XCTAssertNil(CostModel.software.withHostKernels(false).host(evaluations: 100, filters: 2))
    }

    func testCPUFlags() {
        let flags = CPUFeatures.flags(inCPUInfo: "processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma bmi1\nbugs\t: none\n")
        XCTAssertEqual(flags, ["fpu", "sse2", "avx", "avx2", "fma", "bmi1"])
        XCTAssertFalse(flags.isSuperset(of: CPUFeatures.haswellFlags), "no bmi2, f16c, movbe, abm, popcnt")
    }

    func testCostModelByRendererName() {
        XCTAssertEqual(CostModel.forRenderer(named: "llvmpipe (LLVM 15.0.6, 256 bits)"), .software)
        XCTAssertEqual(CostModel.forRenderer(named: "NVIDIA H100 80GB HBM3/PCIe/SSE2"), .hardware)
        // A software rasteriser pays per fragment and fetch, a GPU per pass: the same two plans
        // compare the other way round.
        let onePassManyFetches = (fragments: 2_000_000, fetches: 8, instructions: 60, passes: 1)
        let threeCheapPasses = (fragments: 1_000_000, fetches: 2, instructions: 10, passes: 4)
        func cost(_ m: CostModel, _ p: (fragments: Int, fetches: Int, instructions: Int, passes: Int)) -> Double {
            Double(p.passes) * m.pass(fragments: p.fragments / p.passes, fetches: p.fetches, instructions: p.instructions)
        }
        XCTAssertLessThan(cost(.software, threeCheapPasses), cost(.software, onePassManyFetches))
        XCTAssertLessThan(cost(.hardware, onePassManyFetches), cost(.hardware, threeCheapPasses))
    }
}
