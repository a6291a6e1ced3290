import CEGL
import GPUEncodeCore

/// The uniforms every program of a video renderer shares (source planes, colour matrices,
/// geometry), fixed for the run: set once on each program as it is made. A uniform a program does
/// not use has location -1, which GL ignores.
struct FrameUniforms {
    let geometry: RenderGeometry
    let toRGB: AffineColorMap
    let toOutput: AffineColorMap
    /// Widths of the source textures (packed planes are a quarter as wide as the picture).
    let lumaTexels: Int
    let chromaTexels: Int

    func set(on program: ShaderProgram) {
        let g = geometry
        let map = g.rotation.sourceMapping(srcWidth: Float(g.sourceWidth), srcHeight: Float(g.sourceHeight))
        program.use()
        program.set("texY", int: 0)
        program.set("texU", int: 1)
        program.set("texV", int: 2)
        program.set("rgbaTex", int: 0)
        program.setMatrix("yuvToRgb", rows: toRGB.rows)
        program.set("yuvOffset", toRGB.offset[0], toRGB.offset[1], toRGB.offset[2])
        program.setMatrix("rgbToYuv", rows: toOutput.rows)
        program.set("outOffset", toOutput.offset[0], toOutput.offset[1], toOutput.offset[2])
        program.setMatrix("srcFromOut", rows: map.a)
        program.set("srcOffset", map.b.0, map.b.1)
        program.set("lumaSize", Float(g.sourceWidth), Float(g.sourceHeight))
        program.set("chromaScale", 1 / Float(1 << g.chromaShiftX), 1 / Float(1 << g.chromaShiftY))
        // Chroma siting: MPEG-2/H.264 "left" horizontally (co-sited with even luma columns)
        // when subsampled, centred vertically.
        program.set("chromaBias", g.chromaShiftX > 0 ? 0.25 : 0, 0)
        program.set("chromaSize", Float(g.chromaWidth), Float(g.chromaHeight))
        program.set("outSize", Float(g.outputWidth), Float(g.outputHeight))
        glUniform2i(program.location("lumaMax"), GLint(g.sourceWidth - 1), GLint(g.sourceHeight - 1))
        glUniform2i(program.location("chromaMax"), GLint(g.chromaWidth - 1), GLint(g.chromaHeight - 1))
        glUniform2i(program.location("texelMax"), GLint(lumaTexels - 1), GLint(chromaTexels - 1))
    }
}
