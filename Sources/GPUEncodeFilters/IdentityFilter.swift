public enum IdentityFilter {
    public static let declaration = FilterDeclaration(
        name: "identity",
        summary: "Passes the picture through unchanged.",
        glsl: "vec4 {{p}}apply(vec4 c, vec2 uv) { return c; }"
    )
}
