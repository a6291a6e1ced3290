public enum IdentityFilter {
    public static let declaration = FilterDeclaration(
        name: "identity",
        summary: "Passes the picture through unchanged.",
        glsl: "vec4 {{p}}apply(vec4 c, vec2 uv) { return c; }",
        affine: { _, _ in .identity }
    )
}

extension Array where Element == FilterInstance {
    /// Only `identity` filters, or none: a chain that changes no pixel. The renderer runs it without
    /// clamping or rounding (identity is transparent), and kept HDR skips the GPU for it.
    public var onlyIdentity: Bool { allSatisfy { $0.declaration.name == IdentityFilter.declaration.name } }
}
