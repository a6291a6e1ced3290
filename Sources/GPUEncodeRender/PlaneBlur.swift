import CEGL
import Glibc
import GPUEncodeCore
import GPUEncodeFilters

// A large Gaussian blur computed on the source's own Y'CbCr planes at a quarter of the resolution,
// then interpolated back in the pass that writes NV12.
//
// why: the reference path converts every pixel to RGBA, blurs four channels at full resolution in
// two passes of ~25 bilinear fetches each, and converts back: on llvmpipe, where a fetch costs far
// more than the arithmetic around it, that is 2.15x the transcode of plain ffmpeg at 1080p. The
// Gaussian is linear, so it commutes with the Y'CbCr -> R'G'B' matrix (the clamp aside: a blur of a
// picture inside the R'G'B' cube stays inside it); 4:2:0 has 1.5 samples a pixel, not 4 channels.
// And a Gaussian of sigma >= 8 has almost nothing left above a quarter of the sample rate, so it
// need only be computed exactly on a grid every 4th pixel each way (luma), every 2nd chroma sample
// (the same grid): a sixteenth of the outputs. Bilinear interpolation of that grid is off by at
// most h^2/8 x max|f''| along each axis: for a full-swing (219-code) luma edge blurred with sigma
// 8 that is 16/8 x 219 x 0.242 / 64 = 1.7 codes, for a full-swing (224-code) chroma edge (sigma 4
// chroma samples, h = 2) 4/8 x 224 x 0.242 / 16 = 1.7; at testsrc2's Cr corners the two axes add
// up to 3.3, so the interpolation down the rows is Catmull-Rom (1.8; Y 1.3).
//
// Passes (planes uploaded four samples per RGBA8 texel, as the fused pass reads them):
//   1. luma columns: each texel's four columns blurred vertically at every 4th row;
//   2. chroma columns: the same for Cb and Cr, at every 2nd chroma row;
//   3. grid: those blurred horizontally at every 4th column / 2nd chroma column, Y'CbCr in one texel;
//   4. NV12: each 4x2 block interpolates its eight Y and two CbCr from the 2x4 grid texels around it
//      and converts them (through R'G'B') to the output's Y'CbCr with the reference's NV12 writer.
//
// Illegal input (Y'CbCr outside the R'G'B' cube, as swscale's BT.601 testsrc2 read as BT.709, or a
// camera's saturated greens): the reference clamps each pixel to the cube before blurring; that
// clamp needs every pixel in R'G'B', which is what this avoids. So this blurs the planes as they
// are and clamps nothing but the output codes (0...255): the result is the exact per-plane
// Gaussian (a chain of identity filters keeps illegal Y'CbCr the same way). Where the input is
// legal the two agree exactly, up to the interpolation above; around illegal colours they differ
// by the clamp (testsrc2: up to ~40 codes of Cr at its saturated bars).

/// The plane-native quarter-grid Gaussian blur (see above); `FrameRenderer` draws it in place of a
/// chain whose only filter is a large `gaussianBlur` (`PlaneBlur.decide`).
final class PlaneBlur {
    /// The grid's spacing in luma pixels (2 chroma samples of 4:2:0).
    static let gridStep = 4

    /// Whether the plane blur computes `filters` (and with which kernel) on a source of geometry `g`
    /// and colour `color`, for the optimized plan (`compile.optionalPasses`). The one place the
    /// choice is made, kept small for the compiler's cost model:
    /// - a chain of one `gaussianBlur` (point filters around it would need R'G'B' per pixel);
    /// - sigma >= 8, quality auto, no radius given (`GaussianBlurFilter.divisor` 4): the grid's
    ///   interpolation error grows as 1 / sigma^2 (sigma 8: 1.7 codes on a full-swing edge; 4: 7);
    /// - gamma light, SDR with BT.709 primaries (only a matrix between source and output, which the
    ///   blur commutes with), no kept HDR or Dolby Vision, 8-bit upright 4:2:0 samples;
    /// - a width a multiple of 8 (whole packed chroma texels, no padding samples at the right edge).
    /// Cost (for the cost model that will own this choice): 4 passes, none at full size but the NV12
    /// writer's, against the reference's box-reduced R'G'B' blur (source, 2 reduced passes, a
    /// full-size bilinear upsample, the NV12 conversion reading 28 R'G'B' texels a block). On
    /// llvmpipe (2 cores, loaded, interleaved) the 1080p filter stage is 20-23 ms a frame against
    /// the reference's 27-30; on a GPU it reads and writes far fewer pixels in as many passes.
    static func decide(_ filters: [FilterInstance], geometry g: RenderGeometry, source: YUVColorSpace, light: FilterLight,
                       keepsSignal: Bool, dolbyVision: Bool, path: RenderPath, compile: CompileOptions) -> (sigma: Double, radius: Int)? {
        guard compile.optionalPasses, path == .direct, filters.count == 1, filters[0].declaration.name == GaussianBlurFilter.declaration.name,
              light == .gamma, !keepsSignal, !dolbyVision, SourceColorShader(color: source).isIdentity, g.bitDepth == 8,
              FrameRenderer.isUpright420(g), g.sourceWidth % 8 == 0, g.sourceHeight % 2 == 0,
              g.outputWidth == g.sourceWidth, g.outputHeight == g.sourceHeight else { return nil }
        // The blur's own reduced path (sigma >= 8, quality auto, no radius given) is where the grid's
        // error is small enough; its radius is then 3 sigma, rounded up.
        guard GaussianBlurFilter.divisor(filters[0]) == 4 else { return nil }
        let sigma = filters[0].double("sigma")
        return (sigma, Int((3 * sigma).rounded(.up)))
    }

    /// The luma kernel and the chroma kernel (half the resolution: half the sigma and radius) of a
    /// blur of `sigma` truncated at `radius`, for the renderer's passes and the CPU kernel alike.
    static func kernels(sigma: Double, radius: Int) -> (luma: PlaneBlurKernel, chroma: PlaneBlurKernel) {
        (PlaneBlurKernel(sigma: sigma, radius: radius), PlaneBlurKernel(sigma: sigma / 2, radius: (radius + 1) / 2))
    }

    /// The CPU kernel's line for `-v` and `validate` (`GridBlurKernel`: the same grid, no GL program).
    static func cpuPassLine(sigma: Double) -> String {
        "on the CPU: source Y'CbCr, gaussianBlur (sigma \(String(format: "%g", sigma)); chroma \(String(format: "%g", sigma / 2))) "
            + "on a grid of every 4th pixel, interpolated to Y'CbCr (no GL program)"
    }

    /// The passes' lines for `-v` and `validate`.
    static func passLines(sigma: Double) -> [String] {
        let s = String(format: "%g", sigma)
        return ["pass 1: source Y, gaussianBlur (sigma \(s)) down the columns at every 4th row (plane-native)",
                "pass 2: source Cb and Cr, gaussianBlur (sigma \(String(format: "%g", sigma / 2))) down the columns at every 2nd row",
                "pass 3: gaussianBlur across the rows at every 4th pixel: a Y'CbCr grid a quarter of the size",
                "pass 4: the grid interpolated, through R'G'B', to NV12"]
    }

    private let lumaColumns: (program: ShaderProgram, target: RenderTarget)
    private let chromaColumns: (program: ShaderProgram, target: RenderTarget)
    private let grid: (program: ShaderProgram, target: RenderTarget)
    /// The NV12 pass: its program, and its target (even Y rows, odd Y rows, CbCr), which the
    /// renderer reads back.
    let output: (program: ShaderProgram, target: RenderTarget)

    /// `planes`: the source's Y, Cb, Cr packed four samples per RGBA8 texel (bound to units 0, 1, 2
    /// when `render` runs); `writer` turns the NV12 pass's GLSL into the renderer's 8-bit writer;
    /// `setUp` sets the renderer's uniforms (matrices) on a program.
    init(geometry g: RenderGeometry, sigma: Double, radius: Int, planes: [Texture],
         writer: (String) -> String, setUp: (ShaderProgram) -> Void) throws {
        let step = PlaneBlur.gridStep
        let (w, h) = (g.sourceWidth, g.sourceHeight)
        // Grid rows from one above the picture to two below its last (the cubic's four rows).
        let gridSize = (w / step + 1, (h - 1) / step + 4)
        // Columns and grid in RGBA8. why: llvmpipe fetches and writes float formats through a much
        // slower path than RGBA8: the NV12 pass's eight grid fetches took 22 ms a 1080p frame from
        // RGBA16F, 5 ms from RGBA8 (loaded machine). The two roundings add up to a code; testsrc2
        // stays within 2.5 codes of the exact Gaussian.
        let stored = GLenum(GL_RGBA8)
        let (luma, chroma) = PlaneBlur.kernels(sigma: sigma, radius: radius)
        lumaColumns = (try ShaderProgram(fragment: PlaneBlurShaders.columns(luma, planes: ["texY"], rowStep: step), label: "plane blur, luma columns"),
                       try RenderTarget(width: planes[0].width, height: gridSize.1, formats: [stored]))
        chromaColumns = (try ShaderProgram(fragment: PlaneBlurShaders.columns(chroma, planes: ["texU", "texV"], rowStep: step / 2), label: "plane blur, chroma columns"),
                         try RenderTarget(width: planes[1].width, height: gridSize.1, formats: [stored, stored]))
        grid = (try ShaderProgram(fragment: PlaneBlurShaders.rows(luma: luma, chroma: chroma), label: "plane blur, rows"),
                try RenderTarget(width: gridSize.0, height: gridSize.1, formats: [stored]))
        output = (try ShaderProgram(fragment: writer(PlaneBlurShaders.nv12), label: "plane blur, grid to NV12"),
                  try RenderTarget(width: (w + 3) / 4, height: h / 2, formats: [GLenum(GL_RGBA8), GLenum(GL_RGBA8), GLenum(GL_RGBA8)]))
        for (program, _) in [lumaColumns, chromaColumns, grid, output] { setUp(program) }

        lumaColumns.program.use()
        lumaColumns.program.set("planeSize", Float(planes[0].width), Float(h))
        chromaColumns.program.use()
        chromaColumns.program.set("planeSize", Float(planes[1].width), Float(g.chromaHeight))
        grid.program.use()
        grid.program.set("lumaColumns", int: 3)
        grid.program.set("cbColumns", int: 4)
        grid.program.set("crColumns", int: 5)
        glUniform2i(grid.program.location("lastTexel"), GLint(planes[0].width - 1), GLint(planes[1].width - 1))
        output.program.use()
        output.program.set("gridTex", int: 3)
        try FrameRenderer.checkError("setting up the plane blur")
    }

    /// Draws the four passes; the source planes are bound to units 0, 1, 2. Leaves the NV12
    /// program in use with its target to be drawn (`FrameRenderer.runBlocks`).
    func render(draw: (RenderTarget) -> Void) {
        lumaColumns.program.use()
        lumaColumns.target.bind()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        chromaColumns.program.use()
        chromaColumns.target.bind()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        let inputs = [lumaColumns.target.textures[0], chromaColumns.target.textures[0], chromaColumns.target.textures[1]]
        for (i, t) in inputs.enumerated() {
            glActiveTexture(GLenum(Int(GL_TEXTURE3) + i))
            glBindTexture(GLenum(GL_TEXTURE_2D), t.id)
        }
        grid.program.use()
        grid.target.bind()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        glActiveTexture(GLenum(GL_TEXTURE3))
        glBindTexture(GLenum(GL_TEXTURE_2D), grid.target.textures[0].id)
        glActiveTexture(GLenum(GL_TEXTURE0))
        output.program.use()
        draw(output.target)
    }
}

/// A normalised Gaussian truncated at `radius` (as `gaussianBlur`'s): weights by distance down the
/// columns, per packed texel across.
struct PlaneBlurKernel {
    let radius: Int
    /// weight[d] for distance d = 0...radius.
    let half: [Double]

    init(sigma: Double, radius: Int) {
        self.radius = radius
        let w = (0...radius).map { i in exp(-Double(i * i) / (2 * sigma * sigma)) }
        let total = w[0] + 2 * w[1...].reduce(0, +)
        half = w.map { $0 / total }
    }

    func weight(_ d: Int) -> Double { abs(d) <= radius ? half[abs(d)] : 0 }

    /// The packed texels across (four samples each) a grid point reads, relative to the texel holding
    /// its centre, where the centre is sample 0 or (`phases` 2: chroma's odd grid columns) sample 2.
    func texels(maxPhase: Int) -> ClosedRange<Int> {
        // Sample c of texel k lies at 4k + c - phase from the centre: k from the first with
        // 4k + 3 >= -radius (phase 0) to the last with 4k - maxPhase <= radius.
        Int((Double(-radius - 3) / 4).rounded(.up))...Int((Double(radius + maxPhase) / 4).rounded(.down))
    }

    /// vec4 weights, texel by texel over `texels(maxPhase:)`, for a centre at sample `phase`.
    func texelWeights(phase: Int, maxPhase: Int) -> [Float] {
        texels(maxPhase: maxPhase).flatMap { k in (0..<4).map { c in Float(weight(4 * k + c - phase)) } }
    }
}
