// `--width`/`--height`/`--size`/`--max-*` (issue 14): the output scaler. Not a preset filter (the
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
public enum ScaleFilter {
    public static let name = "lanczosScale"

    public static let declaration = FilterDeclaration(
        name: name,
        summary: "Lanczos-3 scaling along one axis (the output scaler for --width/--height; not for presets).",
        category: .geometry,
        parameters: [
            .int("size", default: 2, range: 2...16384, "output pixels along the axis"),
            .bool("vertical", default: false, "scale the height (else the width)"),
        ],
        kind: .sampling(glsl: """
        uniform int {{p}}size;
        uniform bool {{p}}vertical;
        float {{p}}lanczos(float x) {
            x = abs(x);
            if (x < 1e-4) return 1.0;
            if (x >= 3.0) return 0.0;
            // sin(pi x) from sin(pi x / 3) by the triple-angle identity: one sine per tap (llvmpipe
            // computes each in software).
            float px = 3.14159265358979 * x;
            float s = sin(px / 3.0);
            return 3.0 * s * (3.0 * s - 4.0 * s * s * s) / (px * px);
        }
        """, passes: ["""
        vec4 {{p}}run(vec2 uv) {
            ivec2 at = ivec2(gl_FragCoord.xy);
            float n = {{p}}vertical ? {{p}}inputSize.y : {{p}}inputSize.x;
            float ratio = n / float({{p}}size);
            // The output pixel's centre in input pixels (pixel i spans i..i+1).
            float centre = ({{p}}vertical ? gl_FragCoord.y : gl_FragCoord.x) * ratio;
            float stretch = max(ratio, 1.0);
            float support = 3.0 * stretch;
            int first = int(ceil(centre - 0.5 - support)), last = int(floor(centre - 0.5 + support));
            int edge = int(n) - 1;
            vec4 sum = vec4(0.0);
            float total = 0.0;
            for (int i = first; i <= last; i++) {
                float w = {{p}}lanczos((float(i) + 0.5 - centre) / stretch);
                int c = clamp(i, 0, edge);
                sum += w * texelFetch({{p}}input, {{p}}vertical ? ivec2(at.x, c) : ivec2(c, at.y), 0);
                total += w;
            }
            return sum / total;
        }
        """]),
        outputSize: { w, h, f in
            let n = Int(f.double("size"))
            return f.double("vertical") != 0 ? (w, n) : (n, h)
        }
    )

    /// The two passes that scale a picture to `width` x `height`: horizontal first, as swscale.
    public static func instances(width: Int, height: Int) -> [FilterInstance] {
        [FilterInstance(declaration, values: ["size": .int(width), "vertical": .bool(false)]),
         FilterInstance(declaration, values: ["size": .int(height), "vertical": .bool(true)])]
    }
}
