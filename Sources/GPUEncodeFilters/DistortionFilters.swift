// GPUImage's distortions: each output position reads the input at a moved texture coordinate
// (bilinear, clamped at the edges). Coordinates are GPUImage's: (0, 0) top-left, (1, 1)
// bottom-right. why: GPUImage passes `aspectRatio` (height / width) in from the framebuffer size; it
// is derived here from the picture's own size, so a preset needs no size of its own. And where
// GPUImage measures distance with `y * aspectRatio + 0.5 - 0.5 * aspectRatio` (pinch, the spheres),
// the circle is only centred on `center` when center.y is 0.5; here y is scaled about center.y, as
// GPUImage2's bulge does, which gives the same picture at the default centre and a round effect
// centred where asked elsewhere.

enum DistortionGLSL {
    /// `{{p}}offset(uv)`: uv - center with y scaled by the aspect ratio (height / width), so its
    /// length is a distance in fractions of the picture's width.
    static let offset = """
    vec2 {{p}}offset(vec2 uv) {
        return vec2(uv.x - {{p}}center.x, (uv.y - {{p}}center.y) * ({{p}}inputSize.y / {{p}}inputSize.x));
    }
    """

    static func sampling(_ uniforms: String, _ run: String) -> FilterKind {
        .sampling(glsl: uniforms + "\n" + offset, passes: [run])
    }

    static let center = ParameterDeclaration.vec2("center", default: [0.5, 0.5], range: -1...2,
                                                  "centre of the effect, as fractions of width and height from the top left")
}

/// Swirl has no aspect ratio in GPUImage: its circle is measured in texture coordinates (an
/// ellipse on a non-square picture) and so is its rotation. Kept as GPUImage draws it.
public enum SwirlFilter {
    public static let declaration = FilterDeclaration(
        name: "swirl",
        summary: "Twists the picture about center, most at the centre and fading to none at radius (GPUImage's SwirlDistortion; radius in texture coordinates, as GPUImage).",
        category: .stylize,
        parameters: [
            DistortionGLSL.center,
            .float("radius", default: 0.5, range: 0...2, "how far the twist reaches, in texture coordinates"),
            .float("angle", default: 1, range: -10...10, "amount of twist: the centre turns by 8 x angle radians"),
        ],
        kind: DistortionGLSL.sampling("""
        uniform vec2 {{p}}center;
        uniform float {{p}}radius;
        uniform float {{p}}angle;
        """, """
        vec4 {{p}}run(vec2 uv) {
            vec2 d = uv - {{p}}center;
            float dist = length(d);
            if (dist < {{p}}radius) {
                float percent = ({{p}}radius - dist) / {{p}}radius;
                float theta = percent * percent * {{p}}angle * 8.0;
                float s = sin(theta), c = cos(theta);
                d = vec2(c * d.x - s * d.y, s * d.x + c * d.y);
            }
            return texture({{p}}input, {{p}}center + d);
        }
        """)
    )
}

public enum BulgeFilter {
    public static let declaration = FilterDeclaration(
        name: "bulge",
        summary: "Magnifies (scale > 0) or shrinks (scale < 0) the picture inside a circle about center (GPUImage's BulgeDistortion; aspect ratio from the picture).",
        category: .stylize,
        parameters: [
            DistortionGLSL.center,
            .float("radius", default: 0.25, range: 0...1, "radius of the circle, as a fraction of the width"),
            .float("scale", default: 0.5, range: -1...1, "amount: positive bulges out, negative pinches in"),
        ],
        kind: DistortionGLSL.sampling("""
        uniform vec2 {{p}}center;
        uniform float {{p}}radius;
        uniform float {{p}}scale;
        """, """
        vec4 {{p}}run(vec2 uv) {
            float dist = length({{p}}offset(uv));
            vec2 at = uv;
            if (dist < {{p}}radius) {
                float percent = 1.0 - (({{p}}radius - dist) / {{p}}radius) * {{p}}scale;
                at = (uv - {{p}}center) * percent * percent + {{p}}center;
            }
            return texture({{p}}input, at);
        }
        """)
    )
}

public enum PinchFilter {
    public static let declaration = FilterDeclaration(
        name: "pinch",
        summary: "Pulls the picture towards (scale > 0) or pushes it away from (scale < 0) center inside radius (GPUImage's PinchDistortion; aspect ratio from the picture).",
        category: .stylize,
        parameters: [
            DistortionGLSL.center,
            .float("radius", default: 1, range: 0...2, "radius of the affected circle, as a fraction of the width"),
            .float("scale", default: 0.5, range: -2...2, "amount of pinch"),
        ],
        // why: GPUImage's strength profile is 1 + (0.5 - distance) / 0.5 * scale whatever the
        // radius (so the edge of a radius other than 0.5 is a visible step); kept as GPUImage.
        kind: DistortionGLSL.sampling("""
        uniform vec2 {{p}}center;
        uniform float {{p}}radius;
        uniform float {{p}}scale;
        """, """
        vec4 {{p}}run(vec2 uv) {
            float dist = length({{p}}offset(uv));
            vec2 at = uv;
            if (dist < {{p}}radius) {
                float percent = 1.0 + ((0.5 - dist) / 0.5) * {{p}}scale;
                at = (uv - {{p}}center) * percent + {{p}}center;
            }
            return texture({{p}}input, at);
        }
        """)
    )
}

/// GPUImage's stretch works in -1...1 coordinates per axis and has no aspect ratio (each axis is
/// stretched on its own), so none is applied here either.
public enum StretchFilter {
    public static let declaration = FilterDeclaration(
        name: "stretch",
        summary: "Stretches the middle of the picture out from center, squeezing towards the edges (GPUImage's StretchDistortion).",
        category: .stylize,
        parameters: [DistortionGLSL.center],
        kind: DistortionGLSL.sampling("uniform vec2 {{p}}center;", """
        vec4 {{p}}run(vec2 uv) {
            vec2 d = 2.0 * (uv - {{p}}center);
            vec2 a = abs(d);
            a = 0.5 * a + 0.5 * smoothstep(0.25, 0.5, a) * a;
            return texture({{p}}input, sign(d) * a * 0.5 + {{p}}center);
        }
        """)
    )
}

/// The sphere's surface normal at uv, or a zero vector outside the sphere.
enum SphereGLSL {
    static let uniforms = """
    uniform vec2 {{p}}center;
    uniform float {{p}}radius;
    uniform float {{p}}refractiveIndex;
    """
    // why: GPUImage multiplies by step(distance, radius) after taking sqrt of a negative number
    // outside the sphere; the explicit test gives the same transparent black without NaNs.
    static let normal = """
    vec3 {{p}}normal(vec2 uv) {
        vec2 d = {{p}}offset(uv);
        float r = max({{p}}radius, 1e-6);
        float t = length(d) / r;
        if (t > 1.0) return vec3(0.0);
        return normalize(vec3(d, r * sqrt(max(1.0 - t * t, 0.0))));
    }
    """
}

public enum SphereRefractionFilter {
    public static let declaration = FilterDeclaration(
        name: "sphereRefraction",
        summary: "The picture seen through a glass ball at center: upside down inside the circle, transparent black outside (GPUImage's SphereRefraction; aspect ratio from the picture).",
        category: .stylize,
        parameters: [
            DistortionGLSL.center,
            .float("radius", default: 0.25, range: 0...1, "radius of the sphere, as a fraction of the width"),
            .float("refractiveIndex", default: 0.71, range: 0...2, "ratio of refractive indices (air to glass is about 1/1.4)"),
        ],
        kind: DistortionGLSL.sampling(SphereGLSL.uniforms, SphereGLSL.normal + """

        vec4 {{p}}run(vec2 uv) {
            vec3 n = {{p}}normal(uv);
            if (n == vec3(0.0)) return vec4(0.0);
            vec3 refracted = refract(vec3(0.0, 0.0, -1.0), n, {{p}}refractiveIndex);
            return texture({{p}}input, (refracted.xy + 1.0) * 0.5);
        }
        """)
    )
}

public enum GlassSphereFilter {
    public static let declaration = FilterDeclaration(
        name: "glassSphere",
        summary: "A lit glass ball at center: the picture refracted the right way up, with a frosted rim and a highlight, transparent black outside (GPUImage's GlassSphereRefraction; aspect ratio from the picture).",
        category: .stylize,
        parameters: [
            DistortionGLSL.center,
            .float("radius", default: 0.25, range: 0...1, "radius of the sphere, as a fraction of the width"),
            .float("refractiveIndex", default: 0.71, range: 0...2, "ratio of refractive indices (air to glass is about 1/1.4)"),
        ],
        kind: DistortionGLSL.sampling(SphereGLSL.uniforms, SphereGLSL.normal + """

        vec4 {{p}}run(vec2 uv) {
            vec3 n = {{p}}normal(uv);
            if (n == vec3(0.0)) return vec4(0.0);
            vec3 refracted = 2.0 * refract(vec3(0.0, 0.0, -1.0), n, {{p}}refractiveIndex);
            vec3 colour = texture({{p}}input, (1.0 - refracted.xy) * 0.5).rgb;
            // Frosting that grows at grazing angles towards the rim, then GPUImage's specular highlight
            // from a light at (-0.5, 0.5, 1) (left of and below the centre, in front).
            colour += 2.5 * (1.0 - pow(clamp(n.z, 0.0, 1.0), 0.25));
            colour += vec3(0.8) * pow(clamp(dot(normalize(vec3(-0.5, 0.5, 1.0)), n), 0.0, 1.0), 15.0);
            return vec4(colour, 1.0);
        }
        """)
    )
}
