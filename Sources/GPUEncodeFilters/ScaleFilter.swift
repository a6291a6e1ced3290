import Glibc

// `--width`/`--height`/`--size`/`--max-*`: the output scaler. Not a preset filter (the
// catalogue's `resize` is): the pipeline appends it after the preset's chain, so the output has the
// size asked for whatever the preset crops, and it runs wherever the chain runs (every render path,
// both transfer paths, 8- and 10-bit, kept HDR).

/// Separable Lanczos-3, one axis per instance (horizontal, then vertical: two passes), with
/// swscale's geometry: output pixel i is centred on (i + 0.5) * in / out in the input, taps at the
/// input pixels' centres, clamped at the edges (the edge pixel repeated, as swscale folds the
/// weights that fall outside onto it), weights normalised to 1. When shrinking, the kernel is
/// widened by the ratio (support 3 * in / out pixels each side, as swscale's `filterSize`), so it
/// low-passes before it decimates: downscaling does not alias the way bilinear sampling does.
/// why two instances, not two passes of one: a pass's output is the filter's size (or a fraction of
/// it), and the horizontal pass needs the output's width at the input's height.
/// why a weight table: the weights depend only on the output column (row), so they are computed
/// once per run on the CPU, in double precision, into an RGBA32F texture (`weights`), instead of
/// a sine per tap per pixel (llvmpipe computes sines in software: they were 40% of the scaler's
/// time there). Texel (o, 0) holds output pixel o's first tap; texels (o, 1...) its weights, four
/// a texel, zero past its last tap, so every fragment runs the same loop.
public enum ScaleFilter {
    public static let name = "lanczosScale"

    public static let declaration: FilterDeclaration = {
        var d = FilterDeclaration(
            name: name,
            summary: "Lanczos-3 scaling along one axis (the output scaler for --width/--height; not for presets).",
            category: .geometry,
            parameters: [
                .int("size", default: 2, range: 2...16384, "output pixels along the axis"),
                .bool("vertical", default: false, "scale the height (else the width)"),
            ],
            kind: .sampling(glsl: """
            uniform bool {{p}}vertical;
            uniform highp sampler2D {{p}}weights;
            """, passes: ["""
            vec4 {{p}}run(vec2 uv) {
                ivec2 at = ivec2(gl_FragCoord.xy);
                int o = {{p}}vertical ? at.y : at.x;
                int edge = int({{p}}vertical ? {{p}}inputSize.y : {{p}}inputSize.x) - 1;
                int rows = textureSize({{p}}weights, 0).y;
                int first = int(texelFetch({{p}}weights, ivec2(o, 0), 0).r);
                ivec2 step = {{p}}vertical ? ivec2(0, 1) : ivec2(1, 0);
                ivec2 base = {{p}}vertical ? ivec2(at.x, 0) : ivec2(0, at.y);
                vec4 sum = vec4(0.0);
                for (int r = 1; r < rows; r++) {
                    vec4 w = texelFetch({{p}}weights, ivec2(o, r), 0);
                    int i = first + 4 * (r - 1);
                    sum += w.x * texelFetch({{p}}input, base + step * clamp(i, 0, edge), 0)
                         + w.y * texelFetch({{p}}input, base + step * clamp(i + 1, 0, edge), 0)
                         + w.z * texelFetch({{p}}input, base + step * clamp(i + 2, 0, edge), 0)
                         + w.w * texelFetch({{p}}input, base + step * clamp(i + 3, 0, edge), 0);
                }
                return sum;
            }
            """]),
            outputSize: { w, h, f in
                let n = Int(f.double("size"))
                return f.double("vertical") != 0 ? (w, n) : (n, h)
            }
        )
        d.tables = { f, w, h in
            let vertical = f.double("vertical") != 0
            let table = weights(from: vertical ? h : w, to: Int(f.double("size")))
            return ["weights": .image2D(width: table.width, height: table.height, data: .exactFloats(table.texels), linear: false)]
        }
        return d
    }()

    /// The taps of output pixel `o` of `size` from `n` input pixels: the first input pixel and the
    /// normalised weights (indices past the edges are clamped by the shader).
    public static func taps(_ o: Int, from n: Int, to size: Int) -> (first: Int, weights: [Double]) {
        let ratio = Double(n) / Double(size)
        let centre = (Double(o) + 0.5) * ratio
        let stretch = max(ratio, 1)
        let support = 3 * stretch
        let first = Int((centre - 0.5 - support).rounded(.up)), last = Int((centre - 0.5 + support).rounded(.down))
        var w = (first...max(first, last)).map { lanczos((Double($0) + 0.5 - centre) / stretch) }
        let total = w.reduce(0, +)
        w = w.map { $0 / total }
        return (first, w)
    }

    /// L(x) = sinc(x) sinc(x / 3) on |x| < 3.
    public static func lanczos(_ x: Double) -> Double {
        let x = abs(x)
        if x < 1e-9 { return 1 }
        if x >= 3 { return 0 }
        let px = Double.pi * x
        return 3 * sin(px) * sin(px / 3) / (px * px)
    }

    /// The weight texture for scaling `n` pixels to `size` (see the type's comment): `size` wide,
    /// 1 + ceil(taps / 4) high, RGBA floats row by row.
    static func weights(from n: Int, to size: Int) -> (width: Int, height: Int, texels: [Float]) {
        let all = (0..<size).map { taps($0, from: max(n, 1), to: size) }
        let rows = 1 + (all.map(\.weights.count).max()! + 3) / 4
        var texels = [Float](repeating: 0, count: size * rows * 4)
        for (o, t) in all.enumerated() {
            texels[o * 4] = Float(t.first)
            for (k, w) in t.weights.enumerated() { texels[((1 + k / 4) * size + o) * 4 + k % 4] = Float(w) }
        }
        return (size, rows, texels)
    }

    /// The two passes that scale a picture to `width` x `height`: horizontal first, as swscale.
    public static func instances(width: Int, height: Int) -> [FilterInstance] {
        [FilterInstance(declaration, values: ["size": .int(width), "vertical": .bool(false)]),
         FilterInstance(declaration, values: ["size": .int(height), "vertical": .bool(true)])]
    }
}
