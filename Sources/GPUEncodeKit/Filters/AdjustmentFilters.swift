// GPUImage's basic adjustments, with its definitions and ranges.

public enum BrightnessFilter {
    public static let declaration = FilterDeclaration(
        name: "brightness",
        summary: "Adds a constant to R, G and B.",
        parameters: [.float("brightness", default: 0, range: -1...1, "added to each colour channel")],
        glsl: """
        uniform float {{p}}brightness;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(c.rgb + {{p}}brightness, c.a); }
        """
    )
}

public enum ContrastFilter {
    public static let declaration = FilterDeclaration(
        name: "contrast",
        summary: "Scales colour distance from mid-grey: (c - 0.5) * contrast + 0.5.",
        parameters: [.float("contrast", default: 1, range: 0...4, "1 is unchanged, below 1 flattens, above 1 strengthens")],
        glsl: """
        uniform float {{p}}contrast;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4((c.rgb - 0.5) * {{p}}contrast + 0.5, c.a); }
        """
    )
}

public enum SaturationFilter {
    public static let declaration = FilterDeclaration(
        name: "saturation",
        summary: "Mixes between the luminance (Rec. 709 weights) and the colour.",
        parameters: [.float("saturation", default: 1, range: 0...2, "0 is grey, 1 unchanged, 2 doubly saturated")],
        glsl: """
        uniform float {{p}}saturation;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec3 grey = vec3(dot(c.rgb, vec3(0.2125, 0.7154, 0.0721)));
            return vec4(mix(grey, c.rgb, {{p}}saturation), c.a);
        }
        """
    )
}
