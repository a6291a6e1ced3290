import CEGL
import Glibc
import GPUEncodeCore
import GPUEncodeFilters

// Baked colour: the fused passes' `filtered(yuv, uv)` (the source conversion: Y'CbCr matrix, HDR
// transfer, tone and gamut mapping, Dolby Vision reshaping; then the preset's point filters) as one
// 3D table (trilinear or tetrahedral: `Interpolation`), indexed by the source's clamped R'G'B' (`Input`).
// The table is the exact GLSL sampled: a grid of values is drawn through the very `filtered` the
// exact passes compile into a float target and read back, never computed again on the CPU. Its edge
// is the smallest of `sizes` whose lookup stays within `bound` of the exact values at every point of
// a grid twice as dense (the cells' edge, face and body midpoints included); where none does, the
// exact passes run. The writers after `filtered` (matrix to the output's Y'CbCr, chroma decimation,
// dither, 10-bit codes) are unchanged.
//
// Measured (llvmpipe, trilinear, the check grid's worst error in code values at 17³ / 33³ / 65³,
// bound after the slash): 8-bit sources 1977 6 / 3 (3: 33³), nashville 5 / 3 (3: 33³), transfer
// 3 / 2 (2.5: 33³), instant 1.5 (2.5: 17³); 10-bit sources transfer 3.8 / 1.9 / 0.94 (1: 65³),
// instant 0.64 (17³); --hdr keep transfer 15 / 7.5 / 3.8 (4: 65³), instant 2.6 (17³); 1977 on
// 10-bit sources 1.6 at 65³ (not baked: its filters clamp, kinks inside cells). HDR to SDR does not
// bake (tetrahedral): HLG testsrc2 71 / 31 / 24, the real HLG clip 94 at 65³, PQ 56 / 36 / 28. Tone mapping's
// gamut mapping pins a channel at 0 for colours outside BT.709 and the SDR encoding (a 1/2.4 power) is
// vertical there, so a cell across that edge is off by a tenth of the range whatever its size
// (the error falls as the 0.42th power of the cell). Baking it needs the encoding after the lookup
// and the table before the gamut mapping: a split of `SourceColorShader`'s GLSL not made here.

/// One baked `filtered()`: the lookup's GLSL for the fused passes, its table, and the program that
/// bakes the table again when keyframed parameters or the Dolby Vision RPU change.
final class BakedColour {
    /// The texture unit the table is read from (units 0-2 hold the source planes; filters' own
    /// textures start at `FilterBindings.firstUnit`, and a baked pass has none).
    static let unit: Int32 = 3
    /// The table edges tried, smallest first; each one's twice-as-dense grid is a subset of the
    /// largest's (2·64 + 1 = 129 points a side), so the exact values are drawn once.
    static let sizes = [17, 33, 65]
    /// Slack on the bound: the staircase's steps are whole code values, read back as floats.
    static let slack = 0.01

    /// The table's edge (points a side).
    private(set) var size: Int
    /// The largest difference, in output code values, between the lookup and the exact values
    /// over the check grid (`sizes`), for the chosen `size`.
    private(set) var worstError: Double
    /// The fused passes' shader head with `filtered` as the table lookup (instead of `exact`'s).
    let prelude: String
    /// What the table is indexed by. R'G'B' (the source conversion's first step, its matrix and
    /// clamp, done before the lookup) where the conversion starts so: the clamp's edge, a kink
    /// that interpolation across a cell would smooth (5.5 code values off for 1977 at 65³ over
    /// Y'CbCr), is then the table's own edge, and no point is spent on Y'CbCr outside the cube.
    /// Y'CbCr for Dolby Vision, whose reshaping works on the Y'CbCr components.
    enum Input {
        /// R'G'B' 0 ... the value (the conversion's clamp ceiling).
        case rgb(Double)
        /// Normalised Y'CbCr 0 ... the value: 1 for 8-bit planes, the largest code over the deep
        /// sources' scale (`sampleScale`) otherwise.
        case yCbCr(Double)

        var last: Double {
            switch self { case .rgb(let v), .yCbCr(let v): return v }
        }
    }
    let input: Input

    /// Between the table's points. Tetrahedral (4 texel fetches and the weights, as `lut3d`'s) is
    /// the more exact; trilinear is one `texture` call, which llvmpipe's sampler does in its own
    /// code: 1080p 1977's filter stage took 108-124 ms a frame tetrahedral, 51 trilinear, 58-83
    /// exact. Both hold the same bound at the same sizes for every built-in look (measured), and
    /// the bound is checked with whichever runs.
    enum Interpolation: Equatable {
        case tetrahedral, trilinear

        /// The body of `filtered` after `vec3 t = …;` (t: the position in table points), to `rgb`.
        var glsl: String {
            switch self {
            case .trilinear:
                return "    vec3 rgb = texture(bakedTable, (t + 0.5) / (bakedLast + 1.0)).rgb;\n"
            case .tetrahedral:
                return """
                    vec3 base = min(floor(t), vec3(bakedLast - 1.0));
                    vec3 f = t - base;
                    ivec3 i = ivec3(base);
                    // Without branches (llvmpipe runs every side of a branch its lanes disagree on): the
                    // cell's tetrahedron runs from corner 000 along the axis of the largest fraction,
                    // then the next largest, to 111. Tied fractions give a zero weight to whichever
                    // corner the tie picks.
                    float hi = max(max(f.x, f.y), f.z);
                    float lo = min(min(f.x, f.y), f.z);
                    float mid = f.x + f.y + f.z - hi - lo;
                    ivec3 first = ivec3(step(vec3(hi), f));
                    ivec3 second = ivec3(step(vec3(mid), f));
                    vec3 rgb = (1.0 - hi) * bakedAt(i) + (hi - mid) * bakedAt(i + first) + (mid - lo) * bakedAt(i + second)
                        + lo * bakedAt(i + ivec3(1));

                """
            }
        }
    }
    /// The error bound in output code values: 1 for 8-bit outputs, 4 (of 1023) for 10-bit ones,
    /// widened by half a code value for each filter whose result the exact passes round to 8 bits
    /// (8-bit sources in gamma light: GPUImage's look), a staircase that no interpolation follows.
    /// And code values per unit of R'G'B'.
    let bound: Double
    let codeScale: Double

    private var table: GLuint = 0
    /// How the table is interpolated (the lookup's GLSL and the texture's filter).
    let interpolation: Interpolation
    private let bake: ShaderProgram
    private let check: ShaderProgram
    private let bindings: FilterBindings
    /// Keyframed parameters: (owner prefix + name, keyframes); the table is baked again when
    /// their values at a frame's time differ from those it was baked with.
    private let animated: [Keyframes]
    private var bakedWith: [ParameterValue]

    var description: String { "colour baked into a \(size)³ table (within \(String(format: "%.2f", worstError)) of \(Int(bound)) code values)" }

    /// Bakes `exact` (the fused passes' prelude: `ChainRenderer.header`, the source sampling for
    /// `bits`, `filtered`) where `shouldBake` says so; nil otherwise, or where no table size keeps
    /// within the bound (8-bit outputs: 1 code value; `tenBit`: 4 of 1023). `setUp` sets the
    /// renderer's uniforms (the colour matrices) on a program; `owners` are the filters' uniform
    /// owners, bound on the baking program as the exact passes bind them. `roundsTo8Bits`: the
    /// exact chain rounds each filter's result to 8 bits (`FilterCodegen.pointChain`). A baked
    /// chain's pass line (`passes`, the fused pass's) says so.
    static func make(exact: String, filters: [FilterInstance], owners: [(String, FilterInstance)], color: SourceColorShader,
                     bits: Int, tenBit: Bool, roundsTo8Bits: Bool, compile: CompileOptions, interpolation: Interpolation = .trilinear, setUp: (ShaderProgram) -> Void,
                     resources: inout [String: [String: ResourceTexture]], passes: inout [String]) throws -> BakedColour? {
        // (An unclamped source conversion, which only transparent chains have, is a bare matrix.)
        // Dolby Vision is HDR to SDR, which no table size within the bound holds (above); its table
        // would be sized at the first RPU (before it the reshaping is unset) and baked again at
        // each new one (`rebake`).
        guard compile.optionalPasses, color.dolbyVision == nil, color.clamped || !(color.isIdentity || color.keepsSignal),
              isPositionIndependent(filters, color: color) else { return nil }
        let input: Input = color.dolbyVision != nil
            ? .yCbCr(bits > 8 ? Double((1 << bits) - 1) / Double(255 << (bits - 8)) : 1) : .rgb(color.signalMax)
        let lookup = lookupPrelude(bits: bits, input: input, interpolation: interpolation)
        guard shouldBake(exact: exact, baked: lookup) else { return nil }
        let baked = try BakedColour(exact: exact, lookup: lookup, owners: owners, input: input, interpolation: interpolation, tenBit: tenBit,
                                    roundings: roundsTo8Bits ? filters.count : 0,
                                    setUp: setUp, resources: &resources)
        guard baked.worstError <= baked.bound + BakedColour.slack else { return nil }
        if !passes.isEmpty { passes[0] += "; " + baked.description }
        return baked
    }

    private init(exact: String, lookup: String, owners: [(String, FilterInstance)], input: Input, interpolation: Interpolation, tenBit: Bool, roundings: Int,
                 setUp: (ShaderProgram) -> Void, resources: inout [String: [String: ResourceTexture]]) throws {
        prelude = lookup
        self.input = input
        self.interpolation = interpolation
        // The bound is the exact plan's: 1 code value for 8-bit outputs, 4 for 10-bit. A chain that
        // rounds to 8 bits between filters (GPUImage's staircase) cannot be interpolated within it,
        // so such 8-bit looks keep the exact chain.
        (bound, codeScale) = tenBit ? (4, 1020) : (1, 255)
        bake = try ShaderProgram(fragment: exact + BakedColour.gridMain, label: "colour baking")
        setUp(bake)
        bindings = try FilterBindings(program: bake, owners: owners, resources: &resources)
        check = try ShaderProgram(fragment: lookup + BakedColour.gridMain, label: "baked colour check")
        setUp(check)
        check.set("bakedTable", int: BakedColour.unit)
        animated = owners.flatMap { (_, f) in
            f.declaration.parameters.compactMap { p -> Keyframes? in
                if case .animated(let k) = f.values[p.name] ?? p.defaultValue { return k }
                return nil
            }
        }
        bakedWith = animated.map { $0.value(at: 0) }
        size = BakedColour.sizes.last!
        worstError = 0
        try chooseSize()
    }

    deinit {
        var t = table
        if t != 0 { glDeleteTextures(1, &t) }
    }

    // MARK: The decision

    /// Whether `filtered` depends on the colour alone: no filter reads its position (`uv`,
    /// `gl_FragCoord`), the time or frame, a measurement of the frame (`averageColor`, peak
    /// detection), another node's picture or a time-following texture. Keyframed parameters are
    /// allowed: the table is baked again when their values change (`update`).
    static func isPositionIndependent(_ filters: [FilterInstance], color: SourceColorShader) -> Bool {
        if color.toneMapping.peakDetect && color.color.transfer.isHDR { return false }
        func independent(_ f: FilterInstance) -> Bool {
            guard f.declaration.dynamic == nil, f.declaration.name != NodeInputFilter.name else { return false }
            let glsl: String
            switch f.declaration.kind {
            case .point(let g), .blend(let g): glsl = g
            case .sampling, .average: return false
            }
            let names = identifiers(glsl)
            // `uv` once: the parameter of `apply(vec4 c, vec2 uv)` itself.
            return names.filter { $0 == "uv" }.count <= 1
                && !names.contains { ["gl_FragCoord", "time", "frameIndex", "averageColor"].contains($0) }
                && f.overlay.allSatisfy(independent)
        }
        return filters.allSatisfy(independent)
    }

    /// The cost model's one decision: bake where the lookup costs less than the exact `filtered`
    /// on this renderer. On llvmpipe a fragment's cost is its arithmetic and texel fetches
    /// (`estimatedCost`); both shaders share their head, so the whole texts are compared.
    /// (Sepia's few multiply-adds, and chrome's or fade's, beat the lookup; HLG tone mapping and
    /// 1977 do not.)
    static func shouldBake(exact: String, baked: String) -> Bool {
        estimatedCost(exact) > estimatedCost(baked)
    }

    /// A rough per-fragment cost of a shader's text, in arithmetic operations: an operator 1, a
    /// built-in like mix or clamp 2, a transcendental 8, a texel fetch 12 (llvmpipe gathers each
    /// lane's texel), a filtered `texture` read 60 (the sampler reads and weighs up to 8 texels),
    /// a branch 2. Functions are counted once whether or not they are called. Calibrated on
    /// llvmpipe, 1080p filter stage: the trilinear lookup costs about 45 ms a frame over the
    /// identity chain, 1977's exact colour work 55-75, sepia's 2.4.
    static func estimatedCost(_ glsl: String) -> Int {
        let transcendental: Set<String> = ["pow", "exp", "exp2", "log", "log2", "sqrt", "inversesqrt", "sin", "cos", "tan", "asin", "acos", "atan"]
        let fetches: Set<String> = ["texelFetch", "textureGather"]
        let filtered: Set<String> = ["texture", "textureLod"]
        let tokens = scan(glsl)
        var cost = 0
        for (i, t) in tokens.enumerated() {
            if ["+", "-", "*", "/"].contains(t) {
                cost += 1
            } else if t == "if" || t == "?" {
                cost += 2
            } else if i + 1 < tokens.count, tokens[i + 1] == "(", t.first?.isLetter == true {
                cost += transcendental.contains(t) ? 8 : fetches.contains(t) ? 12 : filtered.contains(t) ? 60 : builtins.contains(t) ? 2 : 0
            }
        }
        return cost
    }

    private static let builtins: Set<String> = ["mix", "clamp", "min", "max", "dot", "floor", "fract", "step", "smoothstep", "abs",
                                                "sign", "mod", "length", "normalize", "cross"]

    /// Identifiers and one-character symbols of GLSL text (comments and preprocessor lines dropped).
    static func scan(_ glsl: String) -> [String] {
        var tokens: [String] = []
        for line in glsl.split(separator: "\n") {
            var text = Substring(line)
            if let comment = text.range(of: "//") { text = text[..<comment.lowerBound] }
            if text.trimmingPrefix(while: { $0 == " " }).hasPrefix("#") { continue }
            var word = ""
            for ch in text {
                if ch.isLetter || ch.isNumber || ch == "_" || (ch == "." && !word.isEmpty && word.first!.isNumber) {
                    word.append(ch)
                    continue
                }
                if !word.isEmpty { tokens.append(word); word = "" }
                if !ch.isWhitespace { tokens.append(String(ch)) }
            }
            if !word.isEmpty { tokens.append(word) }
        }
        return tokens
    }

    private static func identifiers(_ glsl: String) -> [String] {
        scan(glsl).filter { $0.first.map { $0.isLetter || $0 == "_" } ?? false }
    }

    // MARK: GLSL

    /// The fused passes' head with `filtered` as the table lookup: the source uniforms and
    /// sampling the writers read, and no colour or filter code.
    static func lookupPrelude(bits: Int, input: Input, interpolation: Interpolation) -> String {
        let index: String
        switch input {
        case .rgb(let last): index = "clamp(yuvToRgb * yuv + yuvOffset, 0.0, \(glslFloat(last))) * (bakedLast / \(glslFloat(last)))"
        case .yCbCr(let last): index = "clamp(yuv * (bakedLast / \(glslFloat(last))), 0.0, bakedLast)"
        }
        return ChainRenderer.header + FrameRenderer.sourceUniforms(SourceSampling(bits: bits)) + """
        uniform highp sampler3D bakedTable;
        uniform float bakedLast;
        \(interpolation == .tetrahedral ? "vec3 bakedAt(ivec3 i) { return texelFetch(bakedTable, i, 0).rgb; }\n" : "")vec4 filtered(vec3 yuv, vec2 uv) {
            vec3 t = \(index);
        \(interpolation.glsl)    return vec4(rgb, 1.0);
        }

        """
    }

    /// A grid of `bakePoints` values a side, from 0 in steps of `bakeStep`, through `filtered`:
    /// square tiles of the first by the second axis, one per value of the third, `bakeTiles` to a
    /// row. `bakeRGB`: the axes are R'G'B', taken back to the Y'CbCr `filtered` reads.
    static let gridMain = """
    uniform bool bakeRGB;
    uniform int bakePoints;
    uniform int bakeTiles;
    uniform float bakeStep;
    out vec4 bakedValue;
    void main() {
        ivec2 p = ivec2(gl_FragCoord.xy);
        ivec2 tile = p / bakePoints;
        vec3 i = vec3(p - tile * bakePoints, tile.y * bakeTiles + tile.x);
        vec3 x = i * bakeStep;
        bakedValue = vec4(filtered(bakeRGB ? inverse(yuvToRgb) * (x - yuvOffset) : x, vec2(0.5)).rgb, 1.0);
    }

    """

    // MARK: Baking

    /// `program`'s `filtered` at `points`³ grid points (0 to `input.last`), as RGB triples with
    /// the first axis the fastest index.
    private func render(_ program: ShaderProgram, points: Int) throws -> [Float] {
        let tiles = Int(Double(points).squareRoot().rounded(.up))
        let rows = (points + tiles - 1) / tiles
        let (w, h) = (points * tiles, points * rows)
        let target = try RenderTarget(width: w, height: h, formats: [GLenum(GL_RGBA32F)])
        // (After the target: making its texture binds it on the active unit, which may be a filter's.)
        if program === bake { bindings.bind() }
        program.use()
        program.set("bakePoints", int: Int32(points))
        program.set("bakeTiles", int: Int32(tiles))
        program.set("bakeStep", Float(input.last / Double(points - 1)))
        if case .rgb = input { program.set("bakeRGB", int: 1) } else { program.set("bakeRGB", int: 0) }
        target.bind()
        glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
        glActiveTexture(GLenum(GL_TEXTURE0))
        var pixels = [Float](repeating: 0, count: w * h * 4)
        glReadBuffer(GLenum(GL_COLOR_ATTACHMENT0))
        glBindFramebuffer(GLenum(GL_READ_FRAMEBUFFER), target.fbo)
        glReadPixels(0, 0, GLsizei(w), GLsizei(h), GLenum(GL_RGBA), GLenum(GL_FLOAT), &pixels)
        try FrameRenderer.checkError("baking colour")
        var out = [Float](repeating: 0, count: points * points * points * 3)
        for z in 0..<points {
            let (tx, ty) = (z % tiles, z / tiles)
            for y in 0..<points {
                let row = (ty * points + y) * w + tx * points
                for x in 0..<points {
                    let s = 4 * (row + x), d = 3 * ((z * points + y) * points + x)
                    out[d] = pixels[s]; out[d + 1] = pixels[s + 1]; out[d + 2] = pixels[s + 2]
                }
            }
        }
        return out
    }

    /// The exact `filtered` at the table's points.
    private func grid(_ points: Int) throws -> [Float] {
        try render(bake, points: points)
    }

    /// Makes `rgb` (an `n`³ grid, `render`'s order) the table; RGBA32F, read with texelFetch.
    private func upload(_ rgb: [Float]) {
        let points = Int(cbrt(Double(rgb.count / 3)).rounded())
        precondition(points * points * points * 3 == rgb.count)
        var rgba = [Float](repeating: 1, count: rgb.count / 3 * 4)
        for i in 0..<(rgb.count / 3) { rgba[4 * i] = rgb[3 * i]; rgba[4 * i + 1] = rgb[3 * i + 1]; rgba[4 * i + 2] = rgb[3 * i + 2] }
        if table != 0 { glDeleteTextures(1, &table) }
        glGenTextures(1, &table)
        glActiveTexture(GLenum(Int32(GL_TEXTURE0) + BakedColour.unit))
        glBindTexture(GLenum(GL_TEXTURE_3D), table)
        glTexStorage3D(GLenum(GL_TEXTURE_3D), 1, GLenum(GL_RGBA32F), GLsizei(points), GLsizei(points), GLsizei(points))
        glPixelStorei(GLenum(GL_UNPACK_ALIGNMENT), 1)
        glTexSubImage3D(GLenum(GL_TEXTURE_3D), 0, 0, 0, 0, GLsizei(points), GLsizei(points), GLsizei(points), GLenum(GL_RGBA), GLenum(GL_FLOAT), rgba)
        let filter = interpolation == .trilinear ? GL_LINEAR : GL_NEAREST
        for p in [GL_TEXTURE_MIN_FILTER, GL_TEXTURE_MAG_FILTER] { glTexParameteri(GLenum(GL_TEXTURE_3D), GLenum(p), filter) }
        for p in [GL_TEXTURE_WRAP_S, GL_TEXTURE_WRAP_T, GL_TEXTURE_WRAP_R] { glTexParameteri(GLenum(GL_TEXTURE_3D), GLenum(p), GL_CLAMP_TO_EDGE) }
        glActiveTexture(GLenum(GL_TEXTURE0))
        size = points
    }

    /// The exact values on the densest check grid, then each size's table from them and its
    /// lookup drawn over that grid: the smallest size within `bound` is kept (else the largest,
    /// whose `worstError` then tells `make` not to bake).
    private func chooseSize() throws {
        let dense = 2 * (BakedColour.sizes.last! - 1) + 1
        let exact = try grid(dense)
        for n in BakedColour.sizes {
            let stride = (dense - 1) / (n - 1)
            var sub = [Float](repeating: 0, count: n * n * n * 3)
            for z in 0..<n { for y in 0..<n { for x in 0..<n {
                let s = 3 * (((z * stride) * dense + y * stride) * dense + x * stride), d = 3 * ((z * n + y) * n + x)
                sub[d] = exact[s]; sub[d + 1] = exact[s + 1]; sub[d + 2] = exact[s + 2]
            } } }
            upload(sub)
            check.use()
            check.set("bakedLast", Float(n - 1))
            let looked = try render(check, points: 2 * (n - 1) + 1)
            // The check grid (2n − 1 a side) is every (stride / 2)-th point of the dense one.
            let half = stride / 2, m = 2 * (n - 1) + 1
            var worst: Float = 0
            for z in 0..<m { for y in 0..<m { for x in 0..<m {
                let s = 3 * (((z * half) * dense + y * half) * dense + x * half), d = 3 * ((z * m + y) * m + x)
                let e = max(abs(looked[d] - exact[s]), abs(looked[d + 1] - exact[s + 1]), abs(looked[d + 2] - exact[s + 2]))
                worst = max(worst, e)
            } } }
            worstError = Double(worst) * codeScale
            if worstError <= bound + BakedColour.slack { break }
        }
    }

    // MARK: Frames

    /// Before a frame at `time`: bakes the table again if keyframed parameters changed, and binds it.
    func update(time: Double) throws {
        if !animated.isEmpty {
            let values = animated.map { $0.value(at: time) }
            if values != bakedWith {
                bake.use()
                bindings.update(time: time)
                upload(try grid(size))
                bakedWith = values
            }
        }
        glActiveTexture(GLenum(Int32(GL_TEXTURE0) + BakedColour.unit))
        glBindTexture(GLenum(GL_TEXTURE_3D), table)
    }

    /// Sets state that `filtered` reads (the Dolby Vision RPU's uniforms) on the baking program
    /// and bakes the table again, at its size.
    func rebake(setting: (ShaderProgram) -> Void) throws {
        setting(bake)
        upload(try grid(size))
    }

    /// Sets the table's uniforms on a pass that reads `prelude` (after `setUp`).
    func setUp(_ program: ShaderProgram) {
        program.use()
        program.set("bakedTable", int: BakedColour.unit)
        program.set("bakedLast", Float(size - 1))
    }
}

/// A GLSL float literal (always with a point or exponent).
private func glslFloat(_ v: Double) -> String {
    let s = "\(v)"
    return s.contains(".") || s.contains("e") ? s : s + ".0"
}

extension SourceColorShader {
    /// The ceiling `sourceRGB` clamps the source's R'G'B' to (its `glsl`'s first line).
    var signalMax: Double {
        isIdentity || keepsSignal || color.transfer == .sdr ? 1 : SourceColorShader.signalCeiling
    }
}
