// GPUImage's colour-matrix family: colorMatrix itself and the fixed matrices built on it.

public enum ColorMatrixFilter {
    public static let identityMatrix: [Double] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]

    public static let declaration = FilterDeclaration(
        name: "colorMatrix",
        summary: "Multiplies each pixel by a 4x4 matrix (rows are the output R, G, B, A) and mixes with the original by intensity.",
        parameters: [
            ParameterDeclaration("matrix", .matrix4, default: .matrix4(identityMatrix),
                                 "4 rows of 4: row i gives output channel i as weights of input R, G, B, A"),
            .float("intensity", default: 1, range: 0...1, "0 keeps the original, 1 applies the matrix fully"),
        ],
        // Uploaded with transpose so that row i of the JSON is row i of the GLSL matrix.
        glsl: """
        uniform mat4 {{p}}matrix;
        uniform float {{p}}intensity;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return mix(c, {{p}}matrix * c, {{p}}intensity); }
        """,
        affine: { f, t in ColourAffine(matrix4: f.doubles("matrix"))?.mixed(f.number("intensity", at: t)) }
    )
}

public enum SepiaFilter {
    /// GPUImageSepiaFilter's matrix; rows are output R, G, B.
    public static let matrix: [Double] = [
        0.3588, 0.7044, 0.1368, 0,
        0.2990, 0.5870, 0.1140, 0,
        0.2392, 0.4696, 0.0912, 0,
        0, 0, 0, 1,
    ]

    public static let declaration = FilterDeclaration(
        name: "sepia",
        summary: "GPUImage's sepia tone colour matrix.",
        parameters: [.float("intensity", default: 1, range: 0...1, "0 keeps the original, 1 is full sepia")],
        glsl: """
        const mat4 {{p}}m = mat4(\(glslColumns(matrix)));
        uniform float {{p}}intensity;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return mix(c, {{p}}m * c, {{p}}intensity); }
        """,
        affine: { f, t in ColourAffine(matrix4: matrix)?.mixed(f.number("intensity", at: t)) }
    )
}

public enum GrayscaleFilter {
    public static let declaration = FilterDeclaration(
        name: "grayscale",
        summary: "Replaces colour by luminance (Rec. 709 weights 0.2125, 0.7154, 0.0721, as GPUImage).",
        glsl: """
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(vec3(dot(c.rgb, vec3(0.2125, 0.7154, 0.0721))), c.a); }
        """,
        affine: { _, _ in ColourAffine.grey }
    )
}

/// GLSL's mat4 constructor takes columns; our matrices are written as rows.
func glslColumns(_ rows: [Double]) -> String {
    var values: [String] = []
    for col in 0..<4 { for row in 0..<4 { values.append(String(rows[row * 4 + col])) } }
    return values.joined(separator: ", ")
}
