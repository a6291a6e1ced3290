import CEGL
import GPUEncodeCore
import GPUEncodeFilters

/// Where a chain's first pass reads its picture: video planes or a still image.
struct ChainSource {
    /// Declares `vec4 sourcePixel(vec2 p)` (p: a pixel centre of the upright picture, in pixels) and
    /// the uniforms it needs. Its textures sit on units 0-3.
    var glsl: String
    var width: Int
    var height: Int
    /// Sets the source's uniforms on the first pass's program (once).
    var setUp: (ShaderProgram) -> Void
    /// Whether `glsl` needs GLSL ES 3.10 (`textureGather`) rather than 3.00.
    var es31 = false
    /// `glsl` and `vec4 sourceQuad(vec2 corner)`: the mean of the four pixels around a pixel corner
    /// of the upright picture (pixels, clamped to the edge), for a first filter that reads the source
    /// itself (`FilterDeclaration.sourcePass`). nil: that filter reads the source pass instead.
    var quadGLSL: String? = nil
}

/// A filter chain that may sample neighbourhoods: the source and the leading point filters in
/// one pass, then each sampling filter's passes with the point filters after it fused into its
/// last pass, all through 8-bit RGBA textures. Textures come from a pool laid out once for the
/// run (a pass writes to whichever texture of its size is no longer read), never per frame.
final class ChainRenderer {
    private struct Pass {
        var program: ShaderProgram
        var target: RenderTarget
        /// Textures read on units 0 (`input`) and 1 (`source`), nil for the first pass.
        var input: RenderTarget?
        var source: RenderTarget?
        var bindings: FilterBindings
        /// Set on the last reduction pass of `averageColor`: read its 1x1 result back.
        var statistic: String? = nil
    }

    /// Per-frame measurements (`averageColor`: RGBA 0...1) of the last `render`.
    private(set) var statistics: [(name: String, value: [Double])] = []

    private var passes: [Pass] = []
    var output: RenderTarget { passes[passes.count - 1].target }
    var outputWidth: Int { reducedOutput?.width ?? output.width }
    var outputHeight: Int { reducedOutput?.height ?? output.height }
    /// Set when the chain stops before its last filter's final upsample (`FilterDeclaration.finalUpsample`):
    /// `output` is then the reduced picture, and the picture's pixel p (of `width` x `height`) is
    /// `texture(output, ((p + 0.5) / divisor + margin) / (output's size))`.
    private(set) var reducedOutput: (divisor: Int, margin: Int, width: Int, height: Int)? = nil
    /// How many different intermediate textures the pool made.
    private(set) var textureCount = 0

    /// The size a chain turns a `width` x `height` picture into.
    static func outputSize(of filters: [FilterInstance], width: Int, height: Int) -> (Int, Int) {
        var size = (width, height)
        for f in filters { if let resize = f.declaration.outputSize { size = resize(size.0, size.1, f) } }
        return (max(1, size.0), max(1, size.1))
    }

    static func needsSampling(_ filters: [FilterInstance]) -> Bool {
        filters.contains { f in
            if f.nodeReference != nil || f.declaration.name == NodeInputFilter.name { return true }
            switch f.declaration.kind {
            case .sampling, .average: return true
            case .point, .blend: return false
            }
        }
    }

    /// The plan the passes were made from (`ChainPlan.description` names them).
    let chainPlan: ChainPlan

    /// `limits`: the current context's, unless a test plans for another GPU.
    /// `deep`: the source has more than 8 bits; every intermediate texture is then half float and
    /// fused filters are not rounded to 8 bits between them (8-bit sources keep GPUImage's RGBA8
    /// textures and rounding, so their outputs do not change).
    /// `endsReduced`: the caller reads the output through `reducedOutput` when it is set, so the
    /// chain may stop before a last filter's final upsample.
    init(source: ChainSource, filters: [FilterInstance], fuse: Bool = true, deep: Bool = false, limits: GPULimits? = nil,
         endsReduced: Bool = false) throws {
        let limits = limits ?? GPULimits.current()
        chainPlan = try ChainPlan(filters: filters, sourceGLSL: source.glsl, fuse: fuse, limits: limits)
        let segments = chainPlan.segments
        let segmentNode = chainPlan.segmentNode
        try ChainRenderer.checkSize(source.width, source.height, limits: limits, of: .input)
        // A node's picture that later steps read is kept (pinned) for the rest of the frame.

        var free: [RenderTarget] = []
        var pinned: [ObjectIdentifier] = []
        var nodes: [String: RenderTarget] = [:]
        /// `precise`: half-float, for the reduced passes of a filter that computes at a smaller
        /// size (their rounding would otherwise be magnified when scaled back up). Colour-renderable
        /// half floats are core in OpenGL ES 3.2, which both llvmpipe and NVIDIA provide.
        func take(_ w: Int, _ h: Int, precise: Bool = false) throws -> RenderTarget {
            let format = GLenum(precise || deep ? GL_RGBA16F : GL_RGBA8)
            if let i = free.firstIndex(where: { $0.width == w && $0.height == h && $0.format == format }) { return free.remove(at: i) }
            try ChainRenderer.checkSize(w, h, limits: limits, of: .preset(filters.first?.context.origin))
            textureCount += 1
            return try RenderTarget(width: w, height: h, formats: [format], filter: GL_LINEAR)
        }
        func release(_ t: RenderTarget) {
            if !pinned.contains(ObjectIdentifier(t)) { free.append(t) }
        }
        var resources: [String: [String: ResourceTexture]] = [:]
        // The first filter reads the source itself where it can (see `sourcePass`): no source pass.
        var sourceReader: (glsl: String, pass: String)? = nil
        if segments.count > 1, segments[0].points.isEmpty, segmentNode[0] == nil,
           case .sampling(_, let f, _) = segments[1], let pass = f.declaration.sourcePass?(f),
           let quad = source.quadGLSL {
            sourceReader = (quad, pass)
        }
        var current: RenderTarget? = nil
        var size = (source.width, source.height)

        for (segmentIndex, segment) in segments.enumerated() {
            defer {
                if let node = segmentNode[segmentIndex], let current {
                    nodes[node] = current
                    pinned.append(ObjectIdentifier(current))
                }
            }
            let (declarations, calls) = FilterCodegen.pointChain(segment.points, roundTo8Bits: !deep)
            switch segment {
            case .source:
                if sourceReader != nil { continue }
                let header = ChainPlan.header(es31: source.es31)
                let program = try ShaderProgram(fragment: header + source.glsl + declarations + """
                out vec4 fragColor;
                void main() {
                    vec2 uv = gl_FragCoord.xy / outSize;
                    vec4 c = sourcePixel(gl_FragCoord.xy);
                \(calls)    \(ChainPlan.store("c", rounded: !deep))
                }
                """, label: "source and point filters")
                program.use()
                source.setUp(program)
                let target = try take(size.0, size.1)
                passes.append(Pass(program: program, target: target, input: nil, source: nil,
                                   bindings: try FilterBindings(program: program, owners: owners(segment.points), resources: &resources,
                                                                inputSize: size, nodes: nodes)))
                current = target
            case .copy:
                let target = try take(size.0, size.1)
                passes.append(try copyPass(reading: current!, into: target, declarations: declarations, calls: calls,
                                           points: segment.points, label: segment.points[0].1.declaration.name,
                                           resources: &resources, nodes: nodes))
                if let current { release(current) }
                current = target
            case .average(let prefix, let f, _):
                // 4x4 blocks averaged per pass down to one texel; then the picture itself goes on,
                // through a copy pass that also runs the point filters after this one.
                let picture = current!
                var input = picture
                var inputSize = size
                var first = true
                var scale = 1
                repeat {
                    let next = ((inputSize.0 + 3) / 4, (inputSize.1 + 3) / 4)
                    let program = try ShaderProgram(fragment: ChainRenderer.header + ChainRenderer.reduction, label: "\(f.declaration.name) reduction")
                    program.use()
                    program.set("reduceInput", int: 0)
                    glUniform2i(program.location("reduceSize"), GLint(inputSize.0), GLint(inputSize.1))
                    glUniform2i(program.location("pictureSize"), GLint(size.0), GLint(size.1))
                    program.set("reduceScale", int: Int32(scale))
                    scale *= 4
                    let target = try take(next.0, next.1)
                    passes.append(Pass(program: program, target: target, input: input, source: input,
                                       bindings: try FilterBindings(program: program, owners: [], resources: &resources, nodes: nodes)))
                    if !first { release(input) }
                    first = false
                    input = target
                    inputSize = next
                } while inputSize.0 > 1 || inputSize.1 > 1
                passes[passes.count - 1].statistic = prefix + f.declaration.name
                release(input)
                let target = try take(size.0, size.1)
                passes.append(try copyPass(reading: picture, into: target, declarations: declarations, calls: calls,
                                           points: segment.points, label: "after \(f.declaration.name)",
                                           resources: &resources, nodes: nodes))
                release(picture)
                current = target
            case .sampling(let prefix, let f, let points):
                guard case .sampling(let glsl, let fixedPasses) = f.declaration.kind else { continue }
                var plan = f.declaration.passPlan?(f) ?? fixedPasses.map { ($0, 1) }
                let upsample = endsReduced && segmentIndex == segments.count - 1 && points.isEmpty && plan.count > 2
                    ? f.declaration.finalUpsample?(f) : nil
                if upsample != nil { plan.removeLast() }
                let segmentInput = current
                let inputSize = size
                size = f.declaration.outputSize.map { $0(size.0, size.1, f) } ?? size
                size = (max(1, size.0), max(1, size.1))
                let filterSize = size
                let margin = f.declaration.passMargin?(f) ?? 0
                var previous: RenderTarget? = nil
                var previousSize = inputSize
                for (k, (passSource, divisor)) in plan.enumerated() {
                    let last = k == plan.count - 1 && upsample == nil
                    let pad = divisor > 1 ? 2 * margin : 0
                    let passSize = last ? filterSize : (max(1, (filterSize.0 + divisor - 1) / divisor) + pad, max(1, (filterSize.1 + divisor - 1) / divisor) + pad)
                    let readsSource = k == 0 && segmentIndex == 1 && sourceReader != nil
                    let precise = !last && divisor > 1
                    let text = readsSource
                        ? ChainRenderer.sourceReadingPassText(prefix: prefix, glsl: glsl, pass: sourceReader!.pass, source: sourceReader!.glsl,
                                                              es31: source.es31, rounded: !deep && !precise)
                        : ChainPlan.samplingPassText(prefix: prefix, glsl: glsl, pass: passSource,
                                                     declarations: last ? declarations : "", calls: last ? calls : "",
                                                     rounded: !deep && !precise)
                    let program: ShaderProgram
                    do { program = try ShaderProgram(checking: text, label: "\(f.declaration.name) pass \(k + 1)") } catch let e as ShaderCompileError {
                        throw ChainRenderer.authorError(e, filter: f, index: Int(prefix.dropFirst().dropLast()) ?? 0)
                    }
                    program.use()
                    if readsSource { source.setUp(program) }
                    program.set("\(prefix)input", int: 0)
                    program.set("\(prefix)source", int: 1)
                    let input = previous ?? segmentInput
                    program.set("\(prefix)inputSize", Float(previousSize.0), Float(previousSize.1))
                    program.set("\(prefix)sourceSize", Float(inputSize.0), Float(inputSize.1))
                    program.set("\(prefix)margin", Float(margin))
                    let target = try take(passSize.0, passSize.1, precise: precise)
                    previousSize = passSize
                    let passOwners = [(prefix, f)] + (last ? owners(points) : [])
                    passes.append(Pass(program: program, target: target, input: input, source: segmentInput,
                                       bindings: try FilterBindings(program: program, owners: passOwners, resources: &resources,
                                                                    inputSize: inputSize, nodes: nodes)))
                    if let previous { release(previous) }
                    previous = target
                }
                if let segmentInput { release(segmentInput) }
                current = previous
                if let upsample { reducedOutput = (upsample, margin, filterSize.0, filterSize.1) }
            }
        }
        for pass in passes {
            pass.program.use()
            pass.program.set("outSize", Float(pass.target.width), Float(pass.target.height))
        }
        try FrameRenderer.checkError("setting up the filter chain")
    }

    /// A sampling filter's first pass reading the source itself (`FilterDeclaration.sourcePass`):
    /// the source's declarations and `sourceQuad` in place of the `input` texture; the source's
    /// planes stay bound on their units, as for the source pass.
    static func sourceReadingPassText(prefix: String, glsl: String, pass: String, source: String, es31: Bool, rounded: Bool) -> String {
        ChainPlan.header(es31: es31) + source + """
        uniform vec2 \(prefix)inputSize;
        uniform vec2 \(prefix)sourceSize;

        """ + glsl.replacingAll("{{p}}", with: prefix) + "\n" + pass.replacingAll("{{p}}", with: prefix) + "\n" + """
        out vec4 fragColor;
        void main() {
            vec2 uv = gl_FragCoord.xy / outSize;
            \(ChainPlan.store("\(prefix)run(uv)", rounded: rounded))
        }
        """
    }

    /// Whose fault a picture too large for the GPU is: the input's (exit 66), or the preset's
    /// (exit 67, its file) when a filter (a resize) makes it so.
    enum PictureOwner {
        case input
        case preset(String?)
    }

    /// Refuses a texture larger than the GPU holds before GL fails on it.
    static func checkSize(_ w: Int, _ h: Int, limits: GPULimits, of owner: PictureOwner) throws {
        guard w > limits.maxTextureSize || h > limits.maxTextureSize else { return }
        let most = "this GPU's textures go up to \(limits.maxTextureSize)x\(limits.maxTextureSize)"
        switch owner {
        case .input: throw GPUEncodeError(.input, "the picture is \(w)x\(h); \(most)")
        case .preset(let file): throw GPUEncodeError(.preset, path: file, "the preset makes a \(w)x\(h) picture; \(most)")
        }
    }

    /// A pass that reads the previous picture pixel for pixel and runs point filters on it.
    private func copyPass(reading input: RenderTarget, into target: RenderTarget, declarations: String, calls: String,
                          points: [(String, FilterInstance)], label: String,
                          resources: inout [String: [String: ResourceTexture]], nodes: [String: RenderTarget]) throws -> Pass {
        let program = try ShaderProgram(fragment: ChainPlan.copyPassText(declarations: declarations, calls: calls,
                                                                          rounded: target.format == GLenum(GL_RGBA8)), label: label)
        program.use()
        program.set("prevTex", int: 0)
        return Pass(program: program, target: target, input: input, source: input,
                    bindings: try FilterBindings(program: program, owners: owners(points), resources: &resources,
                                                 inputSize: (target.width, target.height), nodes: nodes))
    }

    /// A custom shader's compile error, told in the author's terms: the preset, the filter and the
    /// line of the shader's own text (its source is numbered from 1 by a #line directive).
    static func authorError(_ e: ShaderCompileError, filter f: FilterInstance, index: Int) -> GPUEncodeError {
        guard f.declaration.category == .custom else { return GPUEncodeError(.preset, e.description) }
        var lines: [String] = []
        for line in e.log.split(separator: "\n") {
            var text = String(line)
            // Mesa: "0:12(5): error: ..."; NVIDIA: "0(12) : error ...".
            if let n = ChainRenderer.lineNumber(text) {
                if n >= 100000 { continue }
                text = "line \(n): " + (text.split(separator: ":", maxSplits: 2).dropFirst(2).first.map { String($0).trimmingSpaces } ?? text)
            }
            lines.append(text)
        }
        let errors = lines.filter { $0.contains("error") }
        if !errors.isEmpty { lines = errors }
        let what = f.declaration.summary.replacingAll("custom shader ", with: "")
        return GPUEncodeError(.preset, path: f.context.origin, "filters[\(index)] shader \(what) does not compile: \(lines.prefix(3).joined(separator: "; "))")
    }

    static func lineNumber(_ text: String) -> Int? {
        let chars = Array(text)
        guard chars.count > 2, chars[0] == "0", chars[1] == ":" || chars[1] == "(" else { return nil }
        var digits = ""
        for c in chars.dropFirst(2) { if c.isNumber { digits.append(c) } else { break } }
        return Int(digits)
    }

    private func owners(_ points: [(String, FilterInstance)]) -> [(String, FilterInstance)] {
        points.flatMap { FilterCodegen.uniformOwners($0.1, prefix: $0.0) }
    }

    /// Runs every pass; the source's textures must already be bound on units 0-3.
    /// Returns the target holding the result.
    @discardableResult
    func render(time: Double, frameIndex: Int) -> RenderTarget {
        statistics.removeAll(keepingCapacity: true)
        var average: [Float]? = nil
        for pass in passes {
            pass.target.bind()
            pass.program.use()
            pass.program.set("time", Float(time))
            pass.program.set("frameIndex", Float(frameIndex))
            if let average { glUniform4f(pass.program.location("averageColor"), average[0], average[1], average[2], average[3]) }
            if let input = pass.input {
                glActiveTexture(GLenum(GL_TEXTURE0))
                glBindTexture(GLenum(GL_TEXTURE_2D), input.textures[0].id)
                glActiveTexture(GLenum(GL_TEXTURE1))
                glBindTexture(GLenum(GL_TEXTURE_2D), (pass.source ?? input).textures[0].id)
            }
            if pass.bindings.isDynamic { pass.bindings.refresh(time: time) }
            pass.bindings.bind()
            if pass.bindings.isAnimated { pass.bindings.update(time: time) }
            glDrawArrays(GLenum(GL_TRIANGLES), 0, 3)
            if let name = pass.statistic {
                let value = pass.target.readRGBA(width: 1, height: 1)
                statistics.append((String(name.split(separator: "_").last ?? Substring(name)), value))
                average = value.map(Float.init)
            }
        }
        return output
    }

    /// One output texel per 4x4 block of the input: the mean of the picture's pixels the block
    /// stands for. An input texel covers `reduceScale` x `reduceScale` pixels of the picture
    /// (`pictureSize`), fewer at the right and bottom edges, so each is weighted by its true area.
    static let reduction = """
    uniform highp sampler2D reduceInput;
    uniform ivec2 reduceSize;
    uniform ivec2 pictureSize;
    uniform int reduceScale;
    out vec4 fragColor;
    void main() {
        ivec2 base = ivec2(gl_FragCoord.xy) * 4;
        vec4 sum = vec4(0.0);
        float total = 0.0;
        for (int y = 0; y < 4; y++) {
            for (int x = 0; x < 4; x++) {
                ivec2 p = base + ivec2(x, y);
                if (p.x < reduceSize.x && p.y < reduceSize.y) {
                    ivec2 covered = min((p + 1) * reduceScale, pictureSize) - p * reduceScale;
                    float w = float(covered.x * covered.y);
                    sum += texelFetch(reduceInput, p, 0) * w;
                    total += w;
                }
            }
        }
        fragColor = sum / total;
    }
    """

    static var header: String { ChainPlan.header }

    /// Runs `body` on every pass's program (those without a uniform ignore it): a Dolby Vision
    /// frame's RPU (FrameRenderer.setDolbyVision).
    func forEveryProgram(_ body: (ShaderProgram) -> Void) {
        for pass in passes { body(pass.program) }
    }

    /// Sets a float uniform on every pass's program (those without it ignore it): the tone-mapping
    /// peak measured per frame (PeakDetector).
    func setEveryProgram(_ name: String, _ value: Float) {
        for pass in passes {
            pass.program.use()
            pass.program.set(name, value)
        }
    }
}

