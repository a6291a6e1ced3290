// Filters that move colours around the hue circle or along a colour axis: GPUImage's hue,
// vibrance and white balance, Core Image's CIHueAdjust.

import Glibc

/// GPUImageHueFilter: rotates the chroma (I, Q) of YIQ by -hue, keeping Y. GPUImage goes through
/// atan(Q, I) and back; a rotation of the (I, Q) vector is the same map without atan(0, 0), which
/// GLSL leaves undefined for grey pixels.
public enum HueFilter {
    public static let declaration = FilterDeclaration(
        name: "hue",
        summary: "GPUImage's hue rotation: turns the chroma of YIQ by -hue degrees, keeping luma (Y).",
        parameters: [.float("hue", default: 90, range: -360...360, "rotation in degrees (GPUImage's sign: positive turns red towards yellow and green)")],
        glsl: """
        uniform float {{p}}hue;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float y = dot(c.rgb, vec3(0.299, 0.587, 0.114));
            vec2 iq = vec2(dot(c.rgb, vec3(0.595716, -0.274453, -0.321263)), dot(c.rgb, vec3(0.211456, -0.522591, 0.31135)));
            float a = radians({{p}}hue);
            iq = vec2(cos(a) * iq.x + sin(a) * iq.y, cos(a) * iq.y - sin(a) * iq.x);
            return vec4(y + dot(iq, vec2(0.9563, 0.6210)), y + dot(iq, vec2(-0.2721, -0.6474)), y + dot(iq, vec2(-1.1070, 1.7046)), c.a);
        }
        """,
        affine: { f, t in hueRotation(degrees: f.number("hue", at: t)) }
    )
}

/// Core Image's CIHueAdjust "essentially rotates the color cube around the neutral axis" (Apple's
/// Core Image Filter Reference): a rotation of the RGB vector about (1, 1, 1) by angle, so greys
/// stay put. Apple does not say which way; positive angles turn red towards green (R -> G -> B at
/// 120 degree steps), the direction in which HSV hue increases.
public enum HueAdjustFilter {
    public static let declaration = FilterDeclaration(
        name: "hueAdjust",
        summary: "Core Image's CIHueAdjust: rotates the RGB colour cube about its grey axis by angle radians (positive: red towards green).",
        parameters: [.float("angle", default: 0, range: -Double.pi...Double.pi, "rotation in radians; 2.094 (120 degrees) turns red into green")],
        glsl: """
        uniform float {{p}}angle;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec3 k = vec3(0.57735026918962576);
            float cs = cos({{p}}angle), sn = sin({{p}}angle);
            return vec4(c.rgb * cs + cross(k, c.rgb) * sn + k * dot(k, c.rgb) * (1.0 - cs), c.a);
        }
        """,
        affine: { f, t in
            // Rodrigues' rotation about k = (1, 1, 1) / sqrt(3): cos I + sin [k]x + (1 - cos) k k^T.
            let (cs, sn) = (cos(f.number("angle", at: t)), sin(f.number("angle", at: t)))
            let s = sn / 3.0.squareRoot(), kk = (1 - cs) / 3
            return ColourAffine(rows: [cs + kk, kk - s, kk + s, 0,
                                       kk + s, cs + kk, kk - s, 0,
                                       kk - s, kk + s, cs + kk, 0])
        }
    )
}

public enum VibranceFilter {
    public static let declaration = FilterDeclaration(
        name: "vibrance",
        summary: "GPUImage's vibrance: moves each channel away from (positive) or towards (negative) the largest one by 3 x vibrance x (max - mean).",
        parameters: [.float("vibrance", default: 0, range: -1.2...1.2, "0 is unchanged, positive saturates, negative desaturates")],
        glsl: """
        uniform float {{p}}vibrance;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float mx = max(c.r, max(c.g, c.b));
            float amount = (mx - (c.r + c.g + c.b) / 3.0) * -3.0 * {{p}}vibrance;
            return vec4(mix(c.rgb, vec3(mx), amount), c.a);
        }
        """
    )
}

/// GPUImageWhiteBalanceFilter. Temperature mixes towards an overlay of the warm colour
/// (0.93, 0.54, 0) by 0.0004 per kelvin below 5000 and 0.00006 per kelvin above (negative below, so
/// it cools); tint / 100 * 0.05226 is added to the third component of a YIQ-like transform, clamped
/// to +-0.5226. GPUImage writes its RGB<->YIQ matrices row by row into GLSL's column-major mat3, so
/// what it applies are their transposes; the round trip is still the identity, and tint then moves
/// colours along (1, -1.105, 1.702). We keep that arithmetic so presets look as in GPUImage.
public enum WhiteBalanceFilter {
    public static let declaration = FilterDeclaration(
        name: "whiteBalance",
        summary: "GPUImage's white balance: temperature in kelvin (5000 neutral, lower is cooler, higher warmer) and a green/magenta tint.",
        parameters: [
            // why: GPUImage gives no range; at 2500 K the warm overlay is subtracted fully (factor -1).
            .float("temperature", default: 5000, range: 2500...12000, "kelvin: 5000 is unchanged, 4000 very cool, 7000 very warm"),
            .float("tint", default: 0, range: -200...200, "-200 is very green, 200 very pink, 0 unchanged"),
        ],
        glsl: """
        uniform float {{p}}temperature;
        uniform float {{p}}tint;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            const mat3 toYIQ = mat3(0.299, 0.587, 0.114, 0.596, -0.274, -0.322, 0.212, -0.523, 0.311);
            const mat3 toRGB = mat3(1.0, 0.956, 0.621, 1.0, -0.272, -0.647, 1.0, -1.105, 1.702);
            const vec3 warm = vec3(0.93, 0.54, 0.0);
            vec3 yiq = toYIQ * c.rgb;
            yiq.z = clamp(yiq.z + {{p}}tint * 0.01 * 0.05226, -0.5226, 0.5226);
            vec3 rgb = toRGB * yiq;
            vec3 overlay = mix(2.0 * rgb * warm, 1.0 - 2.0 * (1.0 - rgb) * (1.0 - warm), step(0.5, rgb));
            float t = {{p}}temperature - 5000.0;
            float amount = t < 0.0 ? 0.0004 * t : 0.00006 * t;
            return vec4(mix(rgb, overlay, amount), c.a);
        }
        """
    )
}

/// GPUImage's hue filter as a matrix: Y kept, (I, Q) turned by `degrees`, weighted back to R, G, B.
func hueRotation(degrees: Double) -> ColourAffine {
    let a = degrees * Double.pi / 180
    let (c, s) = (cos(a), sin(a))
    let y: [Double] = [0.299, 0.587, 0.114]
    let i: [Double] = [0.595716, -0.274453, -0.321263]
    let q: [Double] = [0.211456, -0.522591, 0.31135]
    let back: [(Double, Double)] = [(0.9563, 0.6210), (-0.2721, -0.6474), (-1.1070, 1.7046)]
    var rows: [Double] = []
    for (wi, wq) in back {
        for j in 0..<3 {
            let turnedI: Double = c * i[j] + s * q[j]
            let turnedQ: Double = c * q[j] - s * i[j]
            rows.append(y[j] + wi * turnedI + wq * turnedQ)
        }
        rows.append(0)
    }
    return ColourAffine(rows: rows)
}
