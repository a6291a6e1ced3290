/// A `.cube` lookup table (Adobe/Iridas or Resolve; see CubeFile and docs/luts.md). The 3D table is
/// an RGBA16F 3D texture read with texelFetch and interpolated here, so tetrahedral interpolation
/// is exact rather than built on the hardware's trilinear filter; the 1D table (alone, or as
/// Resolve's shaper before the 3D one) is a 2D float texture, rows of up to 4096 entries.
public enum Lut3DFilter {
    /// Entries per row of the 1D table's texture (textures are at most 16384 wide on some GPUs).
    static let rowLength = 4096

    static func load(_ f: FilterInstance, _ context: ResourceContext) throws -> CubeFile {
        let path = f.string("file")
        guard !path.isEmpty else { throw FilterError("no .cube file: give \"file\": \"look.cube\"") }
        do {
            if context.builtin { return try CubeFile.parse(context.readFile(path, kind: .cube)) }
            return try CubeFile.parse(context.openFile(path, kind: .cube))
        } catch let e as FilterError where !e.message.hasPrefix("cannot read") && !e.message.hasPrefix(path) {
            throw FilterError("\(path): \(e.message)")
        }
    }

    /// Uniform values (sizes and ranges) for a parsed file: `sizes` = [1D entries or 0, 3D edge or
    /// 0, entries per row of the 1D texture]; `ranges` = 1D min RGB, 1D max RGB, 3D min RGB, 3D max RGB.
    static func uniforms(_ cube: CubeFile) -> [String: [Float]] {
        ["sizes": [Float(cube.size1D), Float(cube.size3D), Float(min(max(cube.size1D, 2), rowLength))],
         "ranges": (cube.min1D + cube.max1D + cube.min3D + cube.max3D).map(Float.init)]
    }

    static func resources(_ cube: CubeFile) -> [String: FilterResource] {
        // A sampler that is declared must have its own texture (a 3D and a 2D sampler may not share
        // a unit), so a file without one of the tables still gets a small unused one.
        var shaper: FilterResource = .image2D(width: 2, height: 1, data: .floats([0, 0, 0, 1, 1, 1, 1, 1]), linear: false)
        if cube.size1D > 0 {
            let width = min(cube.size1D, rowLength)
            let height = (cube.size1D + width - 1) / width
            var data = cube.table1D
            data += [Float](repeating: 0, count: width * height * 4 - data.count)
            shaper = .image2D(width: width, height: height, data: .floats(data), linear: false)
        }
        var identity: [Float] = []
        for i in 0..<8 { identity += [Float(i & 1), Float((i >> 1) & 1), Float(i >> 2), 1] }
        var table: FilterResource = .table3D(size: 2, data: identity)
        if cube.size3D > 0 { table = .table3D(size: cube.size3D, data: cube.table3D) }
        let u = uniforms(cube)
        return ["shaper": shaper, "table": table, "sizes": .uniforms(u["sizes"]!), "ranges": .uniforms(u["ranges"]!)]
    }

    public static let declaration = FilterDeclaration(
        name: "lut3d",
        summary: "Colour grade from a .cube file (Adobe/Iridas or Resolve: 3D, 1D, or a 1D shaper then 3D), tetrahedral or trilinear interpolation.",
        category: .lookup,
        parameters: [
            .file("file", extensions: ["cube"], "the .cube file"),
            .choice("interpolation", ["trilinear", "tetrahedral"], default: "tetrahedral",
                    "between the 3D table's points: tetrahedral (smoother neutrals, as Resolve) or trilinear"),
            .float("intensity", default: 1, range: 0...1, "0 keeps the original, 1 applies the table fully"),
        ],
        kind: .point(glsl: """
        uniform highp sampler2D {{p}}shaper;
        uniform highp sampler3D {{p}}table;
        uniform float {{p}}sizes[3];
        uniform float {{p}}ranges[12];
        uniform int {{p}}interpolation;
        uniform float {{p}}intensity;

        float {{p}}entry(int i, int channel) {
            int w = int({{p}}sizes[2]);
            return texelFetch({{p}}shaper, ivec2(i % w, i / w), 0)[channel];
        }
        float {{p}}oneD(float x, int channel) {
            float n = {{p}}sizes[0];
            float lo = {{p}}ranges[channel], hi = {{p}}ranges[3 + channel];
            float t = clamp((x - lo) / (hi - lo), 0.0, 1.0) * (n - 1.0);
            int i = min(int(t), int(n) - 2);
            return mix({{p}}entry(i, channel), {{p}}entry(i + 1, channel), t - float(i));
        }
        vec3 {{p}}at(ivec3 i) { return texelFetch({{p}}table, i, 0).rgb; }
        vec3 {{p}}threeD(vec3 x) {
            float n = {{p}}sizes[1];
            vec3 lo = vec3({{p}}ranges[6], {{p}}ranges[7], {{p}}ranges[8]);
            vec3 hi = vec3({{p}}ranges[9], {{p}}ranges[10], {{p}}ranges[11]);
            vec3 t = clamp((x - lo) / (hi - lo), 0.0, 1.0) * (n - 1.0);
            vec3 base = min(floor(t), vec3(n - 2.0));
            vec3 f = t - base;
            ivec3 i = ivec3(base);
            vec3 c000 = {{p}}at(i), c111 = {{p}}at(i + ivec3(1, 1, 1));
            if ({{p}}interpolation == 0) {
                vec3 c100 = {{p}}at(i + ivec3(1, 0, 0)), c010 = {{p}}at(i + ivec3(0, 1, 0)), c001 = {{p}}at(i + ivec3(0, 0, 1));
                vec3 c110 = {{p}}at(i + ivec3(1, 1, 0)), c101 = {{p}}at(i + ivec3(1, 0, 1)), c011 = {{p}}at(i + ivec3(0, 1, 1));
                vec3 g0 = mix(mix(c000, c100, f.r), mix(c010, c110, f.r), f.g);
                vec3 g1 = mix(mix(c001, c101, f.r), mix(c011, c111, f.r), f.g);
                return mix(g0, g1, f.b);
            }
            // The cube split into six tetrahedra along its grey diagonal; the one holding f is
            // chosen by the order of its components.
            if (f.r > f.g) {
                if (f.g > f.b) return (1.0 - f.r) * c000 + (f.r - f.g) * {{p}}at(i + ivec3(1, 0, 0)) + (f.g - f.b) * {{p}}at(i + ivec3(1, 1, 0)) + f.b * c111;
                if (f.r > f.b) return (1.0 - f.r) * c000 + (f.r - f.b) * {{p}}at(i + ivec3(1, 0, 0)) + (f.b - f.g) * {{p}}at(i + ivec3(1, 0, 1)) + f.g * c111;
                return (1.0 - f.b) * c000 + (f.b - f.r) * {{p}}at(i + ivec3(0, 0, 1)) + (f.r - f.g) * {{p}}at(i + ivec3(1, 0, 1)) + f.g * c111;
            }
            if (f.b > f.g) return (1.0 - f.b) * c000 + (f.b - f.g) * {{p}}at(i + ivec3(0, 0, 1)) + (f.g - f.r) * {{p}}at(i + ivec3(0, 1, 1)) + f.r * c111;
            if (f.b > f.r) return (1.0 - f.g) * c000 + (f.g - f.b) * {{p}}at(i + ivec3(0, 1, 0)) + (f.b - f.r) * {{p}}at(i + ivec3(0, 1, 1)) + f.r * c111;
            return (1.0 - f.g) * c000 + (f.g - f.r) * {{p}}at(i + ivec3(0, 1, 0)) + (f.r - f.b) * {{p}}at(i + ivec3(1, 1, 0)) + f.b * c111;
        }
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec3 x = c.rgb;
            if ({{p}}sizes[0] > 0.0) x = vec3({{p}}oneD(x.r, 0), {{p}}oneD(x.g, 1), {{p}}oneD(x.b, 2));
            if ({{p}}sizes[1] > 0.0) x = {{p}}threeD(x);
            return vec4(mix(c.rgb, x, {{p}}intensity), c.a);
        }
        """),
        resources: { f, context in resources(try load(f, context)) }
    )
}
