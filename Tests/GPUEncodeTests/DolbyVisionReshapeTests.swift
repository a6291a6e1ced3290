import CEGL
import Foundation
import GPUEncodeKit
@testable import GPUEncodeRender
import XCTest

/// Dolby Vision's reshaping and colour transform as the renderer's GLSL computes them
/// (`dolbyVisionLinear`, uniforms set by `DolbyVisionReshape.set`) against a float64 reference of
/// the published formulas written here in Python (numpy): per component polynomial and MMR pieces
/// chosen by pivots, clamped to the first and last pivot, the RPU's ycc_to_rgb matrix and offset,
/// the PQ EOTF, rgb_to_lms and LMS to BT.2020 RGB by the Hunt-Pointer-Estevez matrix. The RPU is
/// synthetic (every kind of piece: order 1 and 2 polynomials, MMR of orders 1 to 3, several pieces
/// per component), so every branch of the shader is taken; the picture a 32x32 grid of Y'CbCr
/// (Y' 0...1, Cb and Cr 0.3...0.7).
final class DolbyVisionReshapeTests: GPUEncodeTestCase {
    private var context: GLContext?

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard (try? Oracle.run("python3", ["-c", "import numpy"]))?.status == 0 else { throw XCTSkip("needs python3 with numpy") }
        context = try GLContext(selection: .auto)
    }

    override func tearDown() {
        context = nil
        super.tearDown()
    }

    static let rpu = DolbyVisionRPU(
        baseBitDepth: 10,
        curves: [
            .init(pivots: [0.05, 0.25, 0.6, 0.95], pieces: [.polynomial([0.01, 0.9, 0.1]), .polynomial([0.02, 0.85, 0]), .polynomial([-0.1, 1.3, -0.2])]),
            .init(pivots: [0, 0.5, 1], pieces: [
                .mmr(constant: 0.1, coefficients: [[0.1, 0.5, 0.05, 0.02, -0.03, 0.04, 0.01], [0.01, 0.1, -0.02, 0.01, 0, -0.01, 0.005]]),
                .polynomial([0, 1, 0])]),
            .init(pivots: [0, 0.3, 1], pieces: [
                .mmr(constant: 0.02, coefficients: [[0.01, 0.03, 0.9, -0.02, 0.01, 0.02, -0.01]]),
                .mmr(constant: 0.05, coefficients: [[0.05, 0.02, 0.8, 0.01, 0.02, -0.03, 0.01], [0.01, -0.01, 0.05, 0, 0.01, 0.02, -0.01],
                                                    [0.005, 0, -0.02, 0.001, 0, 0.003, 0]])]),
        ],
        // An iPhone's (profile 8.4) colour transform, with a rgb_to_lms that is not the identity's.
        yccToRGB: [9574, 0, 13802, 9574, -1540, -5348, 9574, 17610, 0].map { Double($0) / 8192 },
        yccOffset: [1.0 / 16, 0.5, 0.5],
        rgbToLMS: [0.40, 0.55, 0.05, 0.18, 0.74, 0.08, 0.02, 0.05, 0.93],
        sourceMinPQ: 62 / 4095.0, sourceMaxPQ: 3079 / 4095.0)

    /// The float64 reference; argv: the RPU as JSON. Prints the 32x32 grid's PQ-coded linear R, G, B.
    static let reference = """
    import json, sys, numpy as np
    rpu = json.loads(sys.argv[1])
    i, j = np.meshgrid(np.arange(32), np.arange(32), indexing='ij')   # i: row, j: column
    yuv = np.stack([j / 31.0, 0.3 + 0.4 * i / 31.0, 0.3 + 0.4 * ((7 * i + 13 * j) % 32) / 31.0], -1)
    sig = np.clip(yuv * 1020.0 / 1023.0, 0, 1)     # 10-bit codes / 1020 (the textures) to codes / 1023
    y, u, v = sig[..., 0], sig[..., 1], sig[..., 2]
    terms = [y, u, v, y * u, y * v, u * v, y * u * v]
    out = np.zeros_like(sig)
    for c, curve in enumerate(rpu['curves']):
        piv = curve['pivots']; s = sig[..., c]; res = np.zeros_like(s)
        piece = np.zeros(s.shape, int)
        for k in range(1, len(piv) - 1): piece[s >= piv[k]] = k
        for k, p in enumerate(curve['pieces']):
            m = piece == k
            if 'poly' in p:
                a = p['poly']; res[m] = a[0] + a[1] * s[m] + a[2] * s[m] ** 2
            else:
                r = np.full(s.shape, p['constant'])
                for order, coef in enumerate(p['mmr'], start=1):
                    r = r + sum(coef[t] * terms[t] ** order for t in range(7))
                res[m] = r[m]
        out[..., c] = np.clip(res, piv[0], piv[-1])
    M = np.array(rpu['ycc']).reshape(3, 3); off = np.array(rpu['offset']); L = np.array(rpu['lms']).reshape(3, 3)
    e = np.clip((out - off) @ M.T, 0, 1)
    m1, m2, c1, c2, c3 = 2610 / 16384, 2523 / 4096 * 128, 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32
    p = np.power(e, 1 / m2)
    lin = np.power(np.maximum(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    def xyz(x, y): return np.array([x / y, 1, (1 - x - y) / y])
    P = np.stack([xyz(0.708, 0.292), xyz(0.170, 0.797), xyz(0.131, 0.046)], 1)
    P = P * np.linalg.solve(P, xyz(0.3127, 0.3290))
    hpe = np.array([[0.4002, 0.7076, -0.0808], [-0.2263, 1.1653, 0.0457], [0, 0, 0.9182]])
    rgb = np.maximum(lin @ (np.linalg.inv(hpe @ P) @ L).T, 0)
    q = np.power(rgb, m1)
    pq = np.power((c1 + c2 * q) / (1 + c3 * q), m2)
    print(json.dumps(pq.reshape(-1).tolist()))
    """

    static var rpuJSON: String {
        func curve(_ c: DolbyVisionRPU.Curve) -> [String: Any] {
            ["pivots": c.pivots, "pieces": c.pieces.map { p -> [String: Any] in
                switch p {
                case .polynomial(let k): return ["poly": k]
                case .mmr(let constant, let k): return ["constant": constant, "mmr": k]
                }
            }]
        }
        let object: [String: Any] = ["curves": rpu.curves.map(curve), "ycc": rpu.yccToRGB, "offset": rpu.yccOffset, "lms": rpu.rgbToLMS]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    func testShaderMatchesFloat64Reference() throws {
        let reshape = DolbyVisionReshape(sourceBits: 10)
        XCTAssertTrue(DolbyVisionReshape.fits(DolbyVisionReshapeTests.rpu))
        // The grid's Y'CbCr as the source textures give them (codes / 1020), pixel (column j, row i).
        let glsl = ChainPlan.header + SourceColorShader.helpers + reshape.glsl + """
        out vec4 fragColor;
        void main() {
            ivec2 p = ivec2(gl_FragCoord.xy);
            vec3 grid = vec3(float(p.x), float(p.y), float((7 * p.y + 13 * p.x) % 32)) / 31.0;
            vec3 rgb = dolbyVisionLinear(vec3(grid.x, 0.3 + 0.4 * grid.yz));
            fragColor = vec4(pqInverseEOTF(rgb.r), pqInverseEOTF(rgb.g), pqInverseEOTF(rgb.b), 1.0);
        }
        """
        let program = try ShaderProgram(fragment: glsl, label: "Dolby Vision test grid")
        reshape.set(DolbyVisionReshapeTests.rpu, on: program)
        let target = try RenderTarget(width: 32, height: 32, formats: [GLenum(GL_RGBA32F)])
        target.bind()
        program.use()
        var vao: GLuint = 0
        glGenVertexArrays(1, &vao)
        glBindVertexArray(vao)
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        var pixels = [Float](repeating: 0, count: 32 * 32 * 4)
        glReadPixels(0, 0, 32, 32, GLenum(GL_RGBA), GLenum(GL_FLOAT), &pixels)
        glDeleteVertexArrays(1, &vao)
        XCTAssertEqual(glGetError(), GLenum(GL_NO_ERROR))

        let out = try Oracle.runChecked("python3", ["-c", DolbyVisionReshapeTests.reference, DolbyVisionReshapeTests.rpuJSON]).stdout
        let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(out.utf8)) as? [Double])
        XCTAssertEqual(expected.count, 32 * 32 * 3)
        var worst = 0.0, at = 0
        for i in 0..<32 {
            for j in 0..<32 {
                for c in 0..<3 {
                    // GL row i is the grid's row i (gl_FragCoord.y counts rows from the first read back).
                    let d = abs(Double(pixels[4 * (32 * i + j) + c]) - expected[3 * (32 * i + j) + c])
                    if d > worst { (worst, at) = (d, 3 * (32 * i + j) + c) }
                }
            }
        }
        // PQ code values: 1/1023 is one 10-bit step.
        print("Dolby Vision shader against float64: largest difference \(worst) (PQ) at \(at)")
        XCTAssertLessThan(worst, 0.25 / 1023, "largest PQ difference \(worst) at grid value \(at)")
        // The grid spans what the pieces map: not all black or all clipped.
        XCTAssertGreaterThan(Set(expected.map { ($0 * 100).rounded() }).count, 40)
    }
}
