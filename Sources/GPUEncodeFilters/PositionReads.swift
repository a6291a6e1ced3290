// Whether a point filter's colour depends on where the pixel is, read from its GLSL. A filter that
// does not is a function of the colour alone and commutes with a resize (up to rounding and the
// clamp to 0...1); one that does may not: a pattern at pixel frequency (grain, scanlines, a
// halftone keyed to `gl_FragCoord` or `uv * outSize`) changes with the picture's size.

extension FilterDeclaration {
    /// The names through which GLSL learns the pixel's position or the picture's size in pixels:
    /// the point signature's `uv`, GL's own `gl_FragCoord`, the chain's `outSize`, and the custom
    /// shaders' built-ins (`ShaderFilter.builtins`). `averageColor` is in the list too: it is
    /// measured over the whole picture, so a resize moves it.
    static let positionNames: Set<String> = ["uv", "gl_FragCoord", "outSize", "textureCoordinate", "inputSize",
                                              "texelWidth", "texelHeight", "averageColor"]

    /// A point filter whose GLSL reads no position (nothing in `positionNames` beyond the `uv`
    /// parameter of `apply` itself). False for every other kind, and for point filters with
    /// per-frame textures, second inputs or sizes of their own.
    public var isPositionFree: Bool {
        guard case let .point(glsl) = kind, dynamic == nil, outputSize == nil, arrays == nil, tables == nil, passPlan == nil else { return false }
        var uvSeen = 0
        for token in GLSLTokens.scan(glsl) {
            switch token.kind {
            case .identifier:
                guard Self.positionNames.contains(token.text) else { continue }
                // The signature `vec4 {{p}}apply(vec4 c, vec2 uv)` names `uv` once; any other use reads it.
                if token.text == "uv" && uvSeen == 0 { uvSeen += 1; continue }
                return false
            case .directive:
                // A macro may spell a position name; it is not expanded here, so any mention counts.
                let words = token.text.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init)
                if words.contains(where: Self.positionNames.contains) { return false }
            default:
                continue
            }
        }
        return true
    }
}

extension FilterInstance {
    /// Whether this filter is a function of the pixel's colour alone (`FilterDeclaration.isPositionFree`),
    /// with no second input (a blend's `with`, a node's `id` reference).
    public var isPositionFreePoint: Bool {
        declaration.isPositionFree && overlay.isEmpty
    }
}
