import GPUEncodeCore
import GPUEncodeFilters

/// How a filter chain is cut into passes: the source and the leading point filters in one pass,
/// each sampling filter's passes with the point filters after it fused into its last pass, a
/// reduction for `averageColor`, and a new pass wherever fusing the next point filter would take
/// the pass over the GPU's limits (uniform storage, samplers) or where a later step reads the
/// picture so far. Made without compiling anything, so `gpuencode validate` plans a preset against
/// the GPU's limits exactly as the run does, and can say when a single filter cannot run at all.
struct ChainPlan {
    enum Segment {
        case source([(String, FilterInstance)])
        /// A pass reading the previous picture pixel for pixel, running point filters.
        case copy([(String, FilterInstance)])
        case sampling(String, FilterInstance, [(String, FilterInstance)])
        case average(String, FilterInstance, [(String, FilterInstance)])

        var points: [(String, FilterInstance)] {
            switch self {
            case .source(let p), .copy(let p), .sampling(_, _, let p), .average(_, _, let p): return p
            }
        }

        func appending(_ p: (String, FilterInstance)) -> Segment {
            switch self {
            case .source(let list): return .source(list + [p])
            case .copy(let list): return .copy(list + [p])
            case .sampling(let prefix, let f, let list): return .sampling(prefix, f, list + [p])
            case .average(let prefix, let f, let list): return .average(prefix, f, list + [p])
            }
        }
    }

    private(set) var segments: [Segment] = []
    /// The node (id) whose picture each segment ends with, kept for later steps that read it.
    private(set) var segmentNode: [String?] = []
    /// What each segment's last pass needs, for `description`.
    private(set) var needs: [ShaderNeeds] = []

    /// `sourceGLSL`: the first pass's own declarations (`ChainSource.glsl`). Throws a preset error
    /// naming the filter when one filter alone needs more than any pass of this GPU can hold.
    init(filters: [FilterInstance], sourceGLSL: String, fuse: Bool = true, limits: GPULimits) throws {
        // Nodes a later blend reads must end a segment, so their picture exists as a texture.
        let referenced = Set(filters.compactMap { f in
            f.nodeReference ?? (f.declaration.name == NodeInputFilter.name ? f.string("node") : nil)
        })
        let copyBase = ShaderNeeds(glsl: ChainPlan.copyPassText(declarations: "", calls: ""))
        segments = [.source([])]
        segmentNode = [referenced.contains("source") ? "source" : nil]
        var base = ShaderNeeds(glsl: ChainPlan.header + sourceGLSL)
        needs = [base]
        var mustSplit = referenced.contains("source")
        var passCount = 1
        var counted = 1
        for (i, f) in filters.enumerated() {
            let prefix = "f\(i)_"
            switch f.declaration.kind {
            case .sampling(let glsl, let fixedPasses):
                let plan = f.declaration.passPlan?(f) ?? fixedPasses.map { ($0, 1) }
                for (k, pass) in plan.enumerated() {
                    let own = ShaderNeeds(glsl: ChainPlan.samplingPassText(prefix: prefix, glsl: glsl, pass: pass.0, declarations: "", calls: ""))
                    if !own.unknown && !own.fits(with: ShaderNeeds(), in: limits) {
                        throw ChainPlan.tooBig(f, index: i, needs: own, limits: limits, what: "pass \(k + 1) of its \(plan.count)")
                    }
                    if k == plan.count - 1 { base = own }
                }
                segments.append(.sampling(prefix, f, []))
                segmentNode.append(nil)
                needs.append(base)
            case .average:
                segments.append(.average(prefix, f, []))
                segmentNode.append(nil)
                base = copyBase
                needs.append(base)
            case .point, .blend:
                let need = ShaderNeeds(glsl: FilterCodegen.function(f, prefix: prefix))
                if !need.unknown && !copyBase.fits(with: need, in: limits) {
                    throw ChainPlan.tooBig(f, index: i, needs: copyBase + need, limits: limits, what: "a pass of its own")
                }
                let current = needs[needs.count - 1]
                let full = !current.fits(with: need, in: limits)
                    // An undeclared size (custom GLSL) runs alone: the linker has the last word.
                    && !(need.unknown && segments[segments.count - 1].points.isEmpty)
                if mustSplit || full || (!fuse && !segments[segments.count - 1].points.isEmpty) {
                    segments.append(.copy([(prefix, f)]))
                    segmentNode.append(nil)
                    base = copyBase
                    needs.append(copyBase + need)
                } else {
                    segments[segments.count - 1] = segments[segments.count - 1].appending((prefix, f))
                    needs[needs.count - 1] = current + need
                }
                // Nothing fuses after a filter of unknown size.
                if need.unknown { needs[needs.count - 1].unknown = true }
            }
            if segments.count != counted {
                passCount += passes(segments[segments.count - 1])
                counted = segments.count
            }
            if passCount > ChainPlan.maxPasses {
                let name = f.id.map { "\"\($0)\" (\(f.declaration.name))" } ?? f.declaration.name
                throw GPUEncodeError(.preset, path: f.context.origin,
                                     "filters[\(i)] \(name) takes the chain past \(ChainPlan.maxPasses) shader passes (each is compiled before the first frame); use fewer filters")
            }
            mustSplit = false
            if let id = f.id, referenced.contains(id) {
                segmentNode[segmentNode.count - 1] = id
                mustSplit = true
            }
        }
    }

    /// Shader passes a chain may have: each is compiled before the first frame (about 0.1-0.2 s on
    /// llvmpipe), so this bounds the start-up time and memory (256 smoothToon filters are 768 passes).
    public static let maxPasses = 256

    /// Shader programs a segment compiles (the reduction of `averageColor` counted once).
    private func passes(_ s: Segment) -> Int {
        switch s {
        case .source, .copy: return 1
        case .average: return 2
        case .sampling(_, let f, _):
            guard case .sampling(_, let fixed) = f.declaration.kind else { return 1 }
            return f.declaration.passPlan?(f).count ?? fixed.count
        }
    }

    /// One line per segment: what runs in it and what its fused pass needs (`gpuencode validate
    /// --passes` prints this, so a plan can be read without running it).
    var description: [String] {
        segments.enumerated().map { (i, s) in
            func names(_ p: [(String, FilterInstance)]) -> [String] { p.map { $0.1.declaration.name } }
            let what: [String]
            switch s {
            case .source(let p): what = ["source"] + names(p)
            case .copy(let p): what = names(p)
            case .sampling(_, let f, let p): what = [f.declaration.name] + names(p)
            case .average(_, let f, let p): what = [f.declaration.name] + names(p)
            }
            let node = segmentNode[i].map { " → node \"\($0)\"" } ?? ""
            return "pass \(i + 1): \(what.joined(separator: ", "))\(node) (\(needs[i]))"
        }
    }

    static func tooBig(_ f: FilterInstance, index: Int, needs: ShaderNeeds, limits: GPULimits, what: String) -> GPUEncodeError {
        let name = f.id.map { "\"\($0)\" (\(f.declaration.name))" } ?? f.declaration.name
        return GPUEncodeError(.preset, path: f.context.origin,
                              "filters[\(index)] \(name) needs \(needs) in \(what), more than this GPU allows in one shader (\(limits.uniformVectors) uniform vectors, \(limits.textureUnits) samplers); no split of the chain can help")
    }

    static let header = header(es31: false)

    /// The first lines of every fragment shader: GLSL ES 3.00, or 3.10 (`es31`: textureGather).
    static func header(es31: Bool) -> String {
        (es31 ? "#version 310 es\n" : "#version 300 es\n") + """
    precision highp float;
    precision highp int;
    precision highp sampler3D;

    """ + FilterCodegen.builtins
    }

    /// The statement that writes a pass's colour `c`. `rounded` (the pass draws into an RGBA8
    /// texture): the colour is rounded to 8-bit codes here rather than by the store. why: GL lets
    /// the float-to-unorm conversion pick either neighbour, and NVIDIA's and llvmpipe's picked
    /// differently for one pixel in nine of a real 480p frame (one code value); a filter deciding on
    /// what it reads (toon's outline, posterize's level, a threshold) turned that into jumps of up to
    /// 204 code values. A colour already on a code (k / 255) is stored exactly by every GPU.
    static func store(_ c: String, rounded: Bool) -> String {
        rounded ? "fragColor = floor(clamp(\(c), 0.0, 1.0) * 255.0 + 0.5) / 255.0;" : "fragColor = \(c);"
    }

    /// A pass that reads the previous picture pixel for pixel and runs the fused point filters.
    static func copyPassText(declarations: String, calls: String, rounded: Bool = false) -> String {
        header + "uniform highp sampler2D prevTex;\n" + declarations + """
        out vec4 fragColor;
        void main() {
            vec2 uv = gl_FragCoord.xy / outSize;
            vec4 c = texelFetch(prevTex, ivec2(gl_FragCoord.xy), 0);
        \(calls)    \(store("c", rounded: rounded))
        }
        """
    }

    /// One pass of a sampling filter; the last one also runs the point filters fused after it.
    static func samplingPassText(prefix: String, glsl: String, pass: String, declarations: String, calls: String,
                                 rounded: Bool = false) -> String {
        header + """
        uniform highp sampler2D \(prefix)input;
        uniform highp sampler2D \(prefix)source;
        uniform vec2 \(prefix)inputSize;
        uniform vec2 \(prefix)sourceSize;

        """ + glsl.replacingAll("{{p}}", with: prefix) + "\n" + pass.replacingAll("{{p}}", with: prefix) + "\n"
            + declarations + """
        out vec4 fragColor;
        void main() {
            vec2 uv = gl_FragCoord.xy / outSize;
            vec4 c = \(prefix)run(uv);
        \(calls)    \(store("c", rounded: rounded))
        }
        """
    }
}
