import CEGL
import Glibc
import GPUEncodeFilters

/// The chroma of a scaled output (`--width`/`--size`): two passes that take the scaled
/// R'G'B' (the chain's result) to the 4:2:0 chroma grid with Lanczos-3, for the conversion passes
/// to turn into Cb and Cr (`chromaFromScaled`, `nv12FromScaled`) instead of the 5x4 kernel.
///
/// why: unscaled, the conversion's 5x4 kernel (`chromaTaps`) is the right one: it undoes the source's
/// linear chroma upsampling, which keeps the identity preset transparent. After the Lanczos scaler
/// the chroma is a new signal reaching the output's Nyquist frequency, which that short kernel both
/// blurs and aliases (testsrc2 halved: Cr 34.9 dB against ffmpeg `scale=flags=lanczos`). swscale
/// scales the chroma plane itself with Lanczos; these passes do the same from the scaled picture:
/// a Lanczos-3 halving along each axis (the kernel stretched by 2: 12 or 13 taps), horizontally
/// first, into half-float targets (no 8-bit rounding before the conversion rounds once).
///
/// Positions are swscale's, so its result is the oracle it can be held to: swscale maps an output
/// chroma sample's centre to the input chroma plane by the scale ratio alone, ignoring the left
/// siting that both planes have. For a scale of ratio R (input / output width) that puts output
/// chroma column j at 2j + 1 - 0.5 / R output pixels (left-sited, as the unscaled path writes it,
/// when R is 1; a quarter output pixel to the right of that for a halving), and row j between
/// rows 2j and 2j + 1, as centred chroma is.
final class ScaledChroma {
    private let passes: [(program: ShaderProgram, target: RenderTarget)]
    /// The chroma-sited R'G'B' (RGBA16F, output width / 2 x height / 2) the last `render` made.
    var texture: Texture { passes[1].target.textures[0] }

    /// Its two passes as the renderer lists passes (`-v`), numbered after the chain's `count`.
    static func passLines(after count: Int) -> [String] {
        ["pass \(count + 1): chroma of the scaled picture, halved across (Lanczos-3)",
         "pass \(count + 2): chroma halved down (Lanczos-3)"]
    }

    /// `width` x `height`: the output (luma) size; `ratio`: the horizontal scale's input width over
    /// its output width. `linear`: the chain's result is linear light (encoded again here first,
    /// as the conversions encode it before they filter chroma).
    init(width: Int, height: Int, ratio: Double, linear: Bool) throws {
        let across = ScaledChroma.taps(offset: 1 - 0.5 / ratio)
        let down = ScaledChroma.taps(offset: 1)
        let format = GLenum(GL_RGBA16F)
        passes = [
            (try ShaderProgram(fragment: FrameRenderer.defining("LINEAR_LIGHT", in: ScaledChroma.shader(across, vertical: false), linear),
                               label: "chroma halving across"),
             try RenderTarget(width: width / 2, height: height, formats: [format])),
            (try ShaderProgram(fragment: ScaledChroma.shader(down, vertical: true), label: "chroma halving down"),
             try RenderTarget(width: width / 2, height: height / 2, formats: [format])),
        ]
        // Each pass's input size is fixed for the run: the scaled picture, then the first pass's output.
        for (program, input) in zip(passes.map(\.program), [(width, height), (width / 2, height)]) {
            program.use()
            program.set("rgbaTex", int: 0)
            program.set("inputMax", int: Int32(input.0 - 1))
            program.set("inputRows", int: Int32(input.1 - 1))
        }
    }

    /// Renders the chroma of `picture` (the chain's scaled result) into `texture`. Leaves unit 0
    /// bound to the first pass's output.
    func render(from picture: Texture) {
        var input = picture
        for (program, target) in passes {
            target.bind()
            program.use()
            glActiveTexture(GLenum(GL_TEXTURE0))
            glBindTexture(GLenum(GL_TEXTURE_2D), input.id)
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
            input = target.textures[0]
        }
    }

    /// The taps of a halving whose output sample j sits at 2j + `offset` input pixels (pixel i's
    /// centre at i + 0.5): the first tap's input pixel relative to 2j and the normalised Lanczos-3
    /// weights, the kernel stretched by 2 (support 6 input pixels each side). The same for every j.
    static func taps(offset: Double) -> (first: Int, weights: [Double]) {
        let first = Int((offset - 6.5).rounded(.up)), last = Int((offset + 5.5).rounded(.down))
        let w = (first...last).map { ScaleFilter.lanczos((Double($0) + 0.5 - offset) / 2) }
        let total = w.reduce(0, +)
        return (first, w.map { $0 / total })
    }

    /// A halving pass: the weights as constants, edge pixels repeated (as swscale folds the
    /// weights past the edge onto them).
    static func shader(_ taps: (first: Int, weights: [Double]), vertical: Bool) -> String {
        let sum = taps.weights.enumerated().map { k, w in
            let at = vertical ? "ivec2(c.x, clamp(2 * c.y + \(taps.first + k), 0, inputRows))"
                              : "ivec2(clamp(2 * c.x + \(taps.first + k), 0, inputMax), c.y)"
            return "    sum += \(w) * rgbaAt(\(at));"
        }.joined(separator: "\n")
        return """
        #version 300 es
        precision highp float;
        precision highp int;
        uniform highp sampler2D rgbaTex;
        uniform int inputMax;
        uniform int inputRows;
        out vec4 color;
        """ + "\n" + FrameRenderer.lightGLSL + FrameRenderer.rgbaReader() + """
        void main() {
            ivec2 c = ivec2(gl_FragCoord.xy);
            vec3 sum = vec3(0.0);
        \(sum)
            color = vec4(sum, 1.0);
        }

        """
    }
}
