import CEGL
import Foundation
import GPUEncodeCore
@testable import GPUEncodeRender
import XCTest

// The tone curves' GLSL (SourceColorShader.curve, the `toneMap` a transcode runs) evaluated on the
// GPU for a sweep of peaks and targets, against a float64 numpy reference written here from the
// published formulas: ITU-R BT.2390's EETF (Hermite knee in PQ, libplacebo's knee offset 1.0, the
// black level lift with libplacebo's exponent min(1/minLum, 4)), ffmpeg's tonemap curves (hable,
// mobius, reinhard with their default parameters) and a clip; where the source peak does not
// exceed the target no curve compresses, and hable and reinhard (which are not the identity at the
// target) fade in up to twice the target.
final class ToneMapCurveTests: XCTestCase {
    override func setUpWithError() throws {
        try SharedGL.ensure()
        guard (try? Self.python(["-c", "import numpy"]))?.status == 0 else { throw XCTSkip("needs python3 with numpy") }
    }

    static func python(_ arguments: [String], input: Data = Data()) throws -> (status: Int32, stdout: Data) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3"] + arguments
        let stdin = Pipe(), stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        try p.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, out)
    }

    /// float64 references: stdin one "curve target sig peak" a line, stdout one value a line.
    static let oracle = #"""
import sys, numpy as np
m1, m2, c1, c2, c3 = 0.1593017578125, 78.84375, 0.8359375, 18.8515625, 18.6875
def pq_inv(y):  # SMPTE ST 2084 inverse EOTF, y in units of 10000 nits
    p = np.maximum(y, 0.0) ** m1
    return ((c1 + c2 * p) / (1 + c3 * p)) ** m2
def pq(e):      # SMPTE ST 2084 EOTF
    p = np.maximum(e, 0.0) ** (1 / m2)
    return (np.maximum(p - c1, 0) / (c2 - c3 * p)) ** (1 / m1)
def bt2390(sig, peak, target):
    scale = target / 10000
    src = pq_inv(max(peak, 1.0) * scale)
    e = min(pq_inv(sig * scale) / src, 1.0)
    maxlum = pq_inv(scale) / src
    ks = 2 * maxlum - 1
    if e > ks:
        t = (e - ks) / (1 - ks)
        e = (2*t**3 - 3*t**2 + 1) * ks + (t**3 - 2*t**2 + t) * (1 - ks) + (-2*t**3 + 3*t**2) * maxlum
    minlum = pq_inv(0.001 * scale) / src
    e += minlum * (1 - e) ** min(1 / minlum, 4.0)
    return 10000 * pq(e * src) / target
def hable(x):
    a, b, c, d, e, f = 0.15, 0.50, 0.10, 0.20, 0.02, 0.30
    return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f
def onset(peak): return min(max(peak - 1, 0.0), 1.0)
def mobius(sig, peak, j=0.3):
    if sig <= j or peak <= 1: return sig
    a = -j * j * (peak - 1) / (j * j - 2 * j + peak)
    b = (j * j - 2 * j * peak + peak) / (peak - 1)
    return (b * b + 2 * b * j + j * j) / (b - a) * (sig + a) / (sig + b)
for line in sys.stdin:
    curve, target, sig, peak = line.split()
    target, sig, peak = float(target), float(sig), float(peak)
    if curve == 'bt2390': v = bt2390(sig, peak, target)
    elif curve == 'hable': w = onset(peak); v = (1 - w) * sig + w * hable(sig) / hable(max(peak, 1.0))
    elif curve == 'reinhard': w = onset(peak); v = (1 - w) * sig + w * sig / (sig + 1) * (peak + 1) / peak
    elif curve == 'mobius': v = mobius(sig, peak)
    else: v = min(sig, 1.0)
    print(repr(float(v)))
"""#

    /// `toneMap` of the grey `sig` (R) and of an orange and a blue of that largest channel (G, B:
    /// one channel each, checked finite) for each (sig, peak) texel of `inputs`.
    func evaluate(_ curve: ToneMapCurve, target: Double, hybrid: Bool, inputs: [(sig: Float, peak: Float)]) throws -> [SIMD4<Float>] {
        let width = 256, height = (inputs.count + 255) / 256
        var data = [Float](repeating: 0, count: width * height * 4)
        for (i, v) in inputs.enumerated() { data[4 * i] = v.sig; data[4 * i + 1] = v.peak }
        var textures = [GLuint](repeating: 0, count: 2), fbo: GLuint = 0
        glGenTextures(2, &textures)
        defer { glDeleteTextures(2, textures); glDeleteFramebuffers(1, &fbo) }
        for t in textures {
            glBindTexture(GLenum(GL_TEXTURE_2D), t)
            glTexStorage2D(GLenum(GL_TEXTURE_2D), 1, GLenum(GL_RGBA32F), GLsizei(width), GLsizei(height))
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MIN_FILTER), GL_NEAREST)
            glTexParameteri(GLenum(GL_TEXTURE_2D), GLenum(GL_TEXTURE_MAG_FILTER), GL_NEAREST)
        }
        glBindTexture(GLenum(GL_TEXTURE_2D), textures[0])
        glTexSubImage2D(GLenum(GL_TEXTURE_2D), 0, 0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_FLOAT), data)
        glGenFramebuffers(1, &fbo)
        glBindFramebuffer(GLenum(GL_FRAMEBUFFER), fbo)
        glFramebufferTexture2D(GLenum(GL_FRAMEBUFFER), GLenum(GL_COLOR_ATTACHMENT0), GLenum(GL_TEXTURE_2D), textures[1], 0)
        XCTAssertEqual(glCheckFramebufferStatus(GLenum(GL_FRAMEBUFFER)), GLenum(GL_FRAMEBUFFER_COMPLETE))
        glViewport(0, 0, GLsizei(width), GLsizei(height))
        let program = try ShaderProgram(fragment: ChainPlan.header + SourceColorShader.helpers
                                        + SourceColorShader.curve(curve, target: target, hybrid: hybrid) + """
            uniform highp sampler2D curveInput;
            out vec4 fragColor;
            void main() {
                vec2 v = texelFetch(curveInput, ivec2(gl_FragCoord.xy), 0).xy;
                fragColor = vec4(toneMap(vec3(v.x), v.y).r, toneMap(v.x * vec3(1.0, 0.5, 0.1), v.y).g,
                                 toneMap(v.x * vec3(0.1, 0.2, 1.0), v.y).b, 1.0);
            }
            """, label: "tone curve \(curve)")
        program.use()
        program.set("curveInput", int: 0)
        glActiveTexture(GLenum(GL_TEXTURE0))
        glBindTexture(GLenum(GL_TEXTURE_2D), textures[0])
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        var out = [Float](repeating: 0, count: width * height * 4)
        glReadPixels(0, 0, GLsizei(width), GLsizei(height), GLenum(GL_RGBA), GLenum(GL_FLOAT), &out)
        return (0..<inputs.count).map { SIMD4(out[4 * $0], out[4 * $0 + 1], out[4 * $0 + 2], out[4 * $0 + 3]) }
    }

    /// Every curve, targets 100, 203 and 1000 nits, peaks (target units) below, at, just above and
    /// far above the target, inputs from black to three times the peak (light above a peak the
    /// metadata understates): finite, non-decreasing, within 0.2% of the float64 reference, the
    /// identity (within 1%) from 0.25 to 1 where the peak does not exceed the target, SDR white
    /// at least 0.999 there, and no jump as the peak crosses the target. (Before: bt2390 gave NaN,
    /// black on screen, at peak = target for light at or above it; hable and reinhard compressed
    /// at the target.)
    func testEveryCurveIsFiniteMonotoneAndIdentityUpToTheTarget() throws {
        let peaks: [Float] = [0.5, 0.985, 1, 1.0001, 1.003, 1.01, 1.1, 1.5, 2, 4.926, 10, 49.26]
        var sigs: [Float] = [0]
        for i in 0..<200 { sigs.append(Float(1e-4 * pow(3 * 49.26 / 1e-4, Double(i) / 199))) }
        sigs += [1, 0.999, 1.001, 0.25, 0.5]
        for curve in ToneMapCurve.allCases {
            for target in [100.0, 203, 1000] {
                for hybrid in curve == .bt2390 ? [false, true] : [false] {
                    var inputs: [(sig: Float, peak: Float)] = []
                    for peak in peaks { for s in (sigs + [peak, peak * 1.001]).sorted() { inputs.append((s, peak)) } }
                    let got = try evaluate(curve, target: target, hybrid: hybrid, inputs: inputs)
                    let text = inputs.map { "\(curve.rawValue) \(target) \($0.sig) \($0.peak)" }.joined(separator: "\n")
                    let run = try Self.python(["-c", Self.oracle], input: Data(text.utf8))
                    XCTAssertEqual(run.status, 0)
                    let expected = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").compactMap { Double($0) }
                    XCTAssertEqual(expected.count, inputs.count)
                    guard expected.count == inputs.count else { return }
                    let what = "\(curve) target \(target)\(hybrid ? " hybrid" : "")"
                    var worst = 0.0, failures = 0
                    for (i, (input, g)) in zip(inputs, got).enumerated() where failures < 5 {
                        let at = "\(what), sig \(input.sig), peak \(input.peak)"
                        guard g.x.isFinite && g.y.isFinite && g.z.isFinite else { XCTFail("\(at): not finite \(g)"); failures += 1; continue }
                        let e = expected[i], error = abs(Double(g.x) - e) / max(e, 1e-3)
                        worst = max(worst, error)
                        if error > 2e-3 { XCTFail("\(at): \(g.x), float64 reference \(e)"); failures += 1 }
                        if i > 0 && inputs[i - 1].peak == input.peak && g.x < got[i - 1].x - 1e-5 * max(g.x, 1) {
                            XCTFail("\(at): \(g.x) after \(got[i - 1].x) at sig \(inputs[i - 1].sig): decreasing"); failures += 1
                        }
                        if input.peak <= 1 && input.sig >= 0.25 && input.sig <= 1 && abs(g.x - input.sig) > 0.01 * input.sig {
                            XCTFail("\(at): \(g.x), not the identity where the peak does not exceed the target"); failures += 1
                        }
                        if input.peak <= 1 && input.sig >= 1 && g.x < 0.999 { XCTFail("\(at): white comes out \(g.x)"); failures += 1 }
                    }
                    // The peak crossing the target (1 → 1.0001): the same picture (after the display's
                    // clip) within 0.1%, on the inputs both peaks share.
                    func shown(_ peak: Float) -> [Float] { zip(inputs, got).filter { $0.0.peak == peak && abs($0.0.sig - 1) > 0.01 }.map { min($0.1.x, 1) } }
                    for (a, b) in zip(shown(1.0001), shown(1)) where abs(a - b) > 1e-3 * max(b, 0.01) {
                        XCTFail("\(what): \(b) at peak 1, \(a) at 1.0001"); break
                    }
                    print("\(what): largest relative difference from float64 \(String(format: "%.2e", worst))")
                }
            }
        }
    }
}
