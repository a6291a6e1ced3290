import CEGL
import Glibc
import GPUEncodeCore

/// Per-scene peak detection (`--peak-detect`), as libplacebo's `peak_detect` and mpv's
/// `hdr-compute-peak`: before each frame is tone-mapped, a GPU reduction measures the frame's
/// brightest and mean light (the largest of R, G, B of `sourceLinear`, PQ-encoded, so the mean is
/// perceptual), the same shape as the `average` filter's reduction (4x4 blocks a pass, down to one
/// RGBA16F texel read back) but keeping the maximum beside the mean. The values are smoothed over
/// frames (an exponential average over `period` frames, libplacebo's default smoothing period),
/// restarted at a scene change (the mean moving by more than `sceneChange` in PQ), and the peak,
/// never below SDR white, becomes the `detectedPeak` uniform the tone curve uses.
final class PeakDetector {
    private var passes: [(program: ShaderProgram, target: RenderTarget, input: RenderTarget?)] = []
    private let targetPeak: Double
    private let ceiling: Double
    private var peakPQ: Double?
    private var meanPQ: Double?
    /// The pass that reads the source (its uniforms are the renderer's, set per frame too).
    var measuringProgram: ShaderProgram { passes[0].program }
    /// The last frame's tone-mapping peak, in target-peak units.
    private(set) var peak: Double = 1

    static let period = 100.0
    static let sceneChange = 0.1

    /// `sourceGLSL`: the renderer's source sampling and colour (with `sourceLinear`) for this
    /// source's depth; `packed`: planes four samples a texel. `ceiling`: the metadata's or nominal
    /// peak (target-peak units), which the measured one never exceeds.
    init(width: Int, height: Int, sourceGLSL: String, packed: Bool, targetPeak: Double, ceiling: Double,
         setUp: (ShaderProgram) -> Void) throws {
        self.targetPeak = targetPeak
        self.ceiling = max(ceiling, 1)
        // One fragment per 4x2 block of source pixels (a packed luma texel over two rows).
        let read = packed ? """
            vec4 l = fetch4(texY, ivec2(q.x, y));
            vec4 u = fetch4(texU, ivec2(q.x >> 1, y >> 1));
            vec4 v = fetch4(texV, ivec2(q.x >> 1, y >> 1));
            int o = (q.x & 1) * 2;
            for (int k = 0; k < 4; k++) {
                if (4 * q.x + k > lumaMax.x) break;
                measure(vec3(l[k], u[o + k / 2], v[o + k / 2]), top, sum, n);
            }
        """ : """
            for (int k = 0; k < 4; k++) {
                int x = min(4 * q.x + k, lumaMax.x);
                measure(sourceAt(vec2(float(x) + 0.5, float(y) + 0.5)), top, sum, n);
            }
        """
        let measure = ChainRenderer.header + sourceGLSL + """
        out vec4 fragColor;
        void measure(vec3 yuv, inout float top, inout float sum, inout float n) {
            vec3 c = sourceLinear(yuv);
            float pq = pqInverseEOTF(max(max(c.r, c.g), c.b) * \(targetPeak / 10000));
            top = max(top, pq);
            sum += pq;
            n += 1.0;
        }
        void main() {
            ivec2 q = ivec2(gl_FragCoord.xy);
            float top = 0.0, sum = 0.0, n = 0.0;
            for (int r = 0; r < 2; r++) {
                int y = min(2 * q.y + r, lumaMax.y);
        \(read)
            }
            fragColor = vec4(top, sum / max(n, 1.0), 0.0, 1.0);
        }
        """
        var size = ((width + 3) / 4, (height + 1) / 2)
        let first = try ShaderProgram(fragment: measure, label: "peak detection")
        setUp(first)
        passes.append((first, try RenderTarget(width: size.0, height: size.1, formats: [GLenum(GL_RGBA16F)]), nil))
        while size.0 > 1 || size.1 > 1 {
            let next = ((size.0 + 3) / 4, (size.1 + 3) / 4)
            let program = try ShaderProgram(fragment: ChainRenderer.header + PeakDetector.reduction, label: "peak reduction")
            program.use()
            program.set("reduceInput", int: 3)
            glUniform2i(program.location("reduceSize"), GLint(size.0), GLint(size.1))
            passes.append((program, try RenderTarget(width: next.0, height: next.1, formats: [GLenum(GL_RGBA16F)]), passes.last!.target))
            size = next
        }
    }

    /// Measures the uploaded source (planes bound on units 0-2) and returns the peak to tone-map
    /// this frame with, in target-peak units. Waits for the GPU (a one-texel readback).
    func measure() -> Double {
        for pass in passes {
            pass.target.bind()
            pass.program.use()
            if let input = pass.input {
                glActiveTexture(GLenum(GL_TEXTURE3))
                glBindTexture(GLenum(GL_TEXTURE_2D), input.textures[0].id)
            }
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        }
        let value = passes.last!.target.readRGBA(width: 1, height: 1)
        let (framePeak, frameMean) = (value[0], value[1])
        if let p = peakPQ, let m = meanPQ, abs(frameMean - m) <= PeakDetector.sceneChange {
            let w = 1 / PeakDetector.period
            peakPQ = p + w * (framePeak - p)
            meanPQ = m + w * (frameMean - m)
        } else {
            peakPQ = framePeak
            meanPQ = frameMean
        }
        peak = min(max(PeakDetector.nits(pq: peakPQ!) / targetPeak, 1), ceiling)
        glActiveTexture(GLenum(GL_TEXTURE0))
        return peak
    }

    /// The PQ EOTF: a code value 0...1 to nits.
    static func nits(pq: Double) -> Double {
        let p: Double = pow(max(pq, 0), 1 / 78.84375)
        let ratio: Double = max(p - 0.8359375, 0) / (18.8515625 - 18.6875 * p)
        return 10000 * pow(ratio, 1 / 0.1593017578125)
    }

    /// One texel per 4x4 block: the largest `r` and the mean `g` of the block's texels.
    static let reduction = """
    uniform highp sampler2D reduceInput;
    uniform ivec2 reduceSize;
    out vec4 fragColor;
    void main() {
        ivec2 base = ivec2(gl_FragCoord.xy) * 4;
        float top = 0.0, sum = 0.0, n = 0.0;
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 4; x++) {
                ivec2 p = base + ivec2(x, y);
                if (p.x < reduceSize.x && p.y < reduceSize.y) {
                    vec4 t = texelFetch(reduceInput, p, 0);
                    top = max(top, t.r);
                    sum += t.g;
                    n += 1.0;
                }
            }
        }
        fragColor = vec4(top, sum / n, 0.0, 1.0);
    }
    """
}
