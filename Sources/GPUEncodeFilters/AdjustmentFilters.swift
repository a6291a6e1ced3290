import GPUEncodeCore

// GPUImage's basic adjustments, with its definitions and ranges.

public enum BrightnessFilter {
    public static let declaration = FilterDeclaration(
        name: "brightness",
        summary: "Adds a constant to R, G and B.",
        parameters: [.float("brightness", default: 0, range: -1...1, "added to each colour channel")],
        glsl: """
        uniform float {{p}}brightness;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(c.rgb + {{p}}brightness, c.a); }
        """,
        affine: { f, t in ColourAffine.identity.contrast(1, plus: f.number("brightness", at: t)) }
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
        """,
        affine: { f, t in ColourAffine.identity.contrast(f.number("contrast", at: t)) }
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
        """,
        affine: { f, t in ColourAffine.saturation(f.number("saturation", at: t)) }
    )
}

public enum ExposureFilter {
    public static let declaration = FilterDeclaration(
        name: "exposure",
        summary: "Scales R, G and B by 2^exposure, like changing exposure by that many stops.",
        parameters: [.float("exposure", default: 0, range: -10...10, "stops: 0 unchanged, +1 doubles, -1 halves")],
        glsl: """
        uniform float {{p}}exposure;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(c.rgb * exp2({{p}}exposure), c.a); }
        """
    )
}

public enum GammaFilter {
    public static let declaration = FilterDeclaration(
        name: "gamma",
        summary: "Raises R, G and B to the power gamma: above 1 darkens the mid-tones, below 1 lightens them.",
        parameters: [.float("gamma", default: 1, range: 0...3, "the exponent; 1 is unchanged")],
        glsl: """
        uniform float {{p}}gamma;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(pow(c.rgb, vec3({{p}}gamma)), c.a); }
        """
    )
}

public enum RGBFilter {
    // why: GPUImage documents the gains as "from 0.0 up" with no upper bound; 10 keeps the range finite.
    public static let declaration = FilterDeclaration(
        name: "rgb",
        summary: "Multiplies the red, green and blue channels by their own gains.",
        parameters: [
            .float("red", default: 1, range: 0...10, "gain of the red channel; 1 is unchanged"),
            .float("green", default: 1, range: 0...10, "gain of the green channel; 1 is unchanged"),
            .float("blue", default: 1, range: 0...10, "gain of the blue channel; 1 is unchanged"),
        ],
        glsl: """
        uniform float {{p}}red;
        uniform float {{p}}green;
        uniform float {{p}}blue;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(c.rgb * vec3({{p}}red, {{p}}green, {{p}}blue), c.a); }
        """
    )
}

/// GPUImage's levels (Photoshop's): input black and white points, a mid-tone gamma, then output
/// black and white points, per channel. Defaults are the identity, as GPUImage2's LevelsAdjustment;
/// GPUImage's Objective-C init sets demo gammas (1.4, 0.8, 0.4) instead.
public enum LevelsFilter {
    public static let declaration = FilterDeclaration(
        name: "levels",
        summary: "Photoshop-style levels per channel: input black/white points min and max, mid-tone gamma, output range minOut...maxOut.",
        parameters: [
            .vec3("min", default: [0, 0, 0], range: 0...1, "input black point (R, G, B): values at or below it become minOut"),
            .vec3("gamma", default: [1, 1, 1], range: 0.1...10, "mid-tone gamma (R, G, B): above 1 lightens, below 1 darkens"),
            .vec3("max", default: [1, 1, 1], range: 0...1, "input white point (R, G, B): values at or above it become maxOut"),
            .vec3("minOut", default: [0, 0, 0], range: 0...1, "output black level (R, G, B)"),
            .vec3("maxOut", default: [1, 1, 1], range: 0...1, "output white level (R, G, B)"),
        ],
        glsl: """
        uniform vec3 {{p}}min;
        uniform vec3 {{p}}gamma;
        uniform vec3 {{p}}max;
        uniform vec3 {{p}}minOut;
        uniform vec3 {{p}}maxOut;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec3 t = min(max(c.rgb - {{p}}min, 0.0) / ({{p}}max - {{p}}min), 1.0);
            return vec4(mix({{p}}minOut, {{p}}maxOut, pow(t, 1.0 / {{p}}gamma)), c.a);
        }
        """,
        check: { f in
            let lo = f.doubles("min"), hi = f.doubles("max")
            for (i, channel) in ["red", "green", "blue"].enumerated() where i < lo.count && i < hi.count && lo[i] >= hi[i] {
                return "min must be below max (\(channel): \(formatNumber(lo[i])) >= \(formatNumber(hi[i])))"
            }
            return nil
        }
    )
}

/// GPUImageHighlightShadowFilter (the iOS shader, whose + 0.001 keeps black from dividing by zero).
public enum HighlightShadowFilter {
    public static let declaration = FilterDeclaration(
        name: "highlightShadow",
        summary: "Lightens shadows and darkens highlights by reshaping a luminance (0.3 R + 0.3 G + 0.3 B) curve and scaling the colour with it.",
        parameters: [
            .float("shadows", default: 0, range: 0...1, "0 leaves shadows, 1 lightens them most"),
            .float("highlights", default: 1, range: 0...1, "1 leaves highlights, 0 darkens them most"),
        ],
        glsl: """
        uniform float {{p}}shadows;
        uniform float {{p}}highlights;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            float l = dot(c.rgb, vec3(0.3)) + 0.001;
            float s = 1.0 / ({{p}}shadows + 1.0);
            float h = 1.0 / (2.0 - {{p}}highlights);
            float lift = clamp(pow(l, s) - 0.76 * pow(l, 2.0 * s) - l, 0.0, 1.0);
            float cut = clamp(1.0 - (pow(1.0 - l, h) - 0.8 * pow(1.0 - l, 2.0 * h)) - l, -1.0, 0.0);
            return vec4(c.rgb * ((l + lift + cut) / l), c.a);
        }
        """
    )
}

public enum OpacityFilter {
    public static let declaration = FilterDeclaration(
        name: "opacity",
        summary: "Multiplies alpha by opacity (for pictures that are blended later; video output is opaque).",
        parameters: [.float("opacity", default: 1, range: 0...1, "the factor applied to alpha")],
        glsl: """
        uniform float {{p}}opacity;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return vec4(c.rgb, c.a * {{p}}opacity); }
        """
    )
}

/// Core Image's CIColorControls as Apple's Core Image Filter Reference defines it: saturation
/// mixes between a grey image (0) and the original (1), extrapolating above 1; contrast is
/// (c - 0.5) * contrast + 0.5; brightness adds a bias. Apple names neither the order nor the grey
/// weights: we take the order the reference describes them in (saturation, contrast, brightness)
/// and Rec. 709 luminance (0.2125, 0.7154, 0.0721, as GPUImage's saturation). Core Image works in
/// linear light by default; like every filter here this one works on the picture's coded values.
public enum ColorControlsFilter {
    public static let declaration = FilterDeclaration(
        name: "colorControls",
        summary: "Core Image's CIColorControls: saturation (mix with Rec. 709 grey), then contrast about 0.5, then brightness added, in one filter.",
        parameters: [
            .float("saturation", default: 1, range: 0...2, "0 is grey, 1 unchanged, 2 doubly saturated"),
            .float("brightness", default: 0, range: -1...1, "added to each channel after contrast"),
            .float("contrast", default: 1, range: 0...4, "scales the distance from 0.5; 1 is unchanged"),
        ],
        glsl: """
        uniform float {{p}}saturation;
        uniform float {{p}}brightness;
        uniform float {{p}}contrast;
        vec4 {{p}}apply(vec4 c, vec2 uv) {
            vec3 grey = vec3(dot(c.rgb, vec3(0.2125, 0.7154, 0.0721)));
            vec3 s = mix(grey, c.rgb, {{p}}saturation);
            return vec4((s - 0.5) * {{p}}contrast + 0.5 + {{p}}brightness, c.a);
        }
        """,
        affine: { f, t in
            ColourAffine.saturation(f.number("saturation", at: t)).contrast(f.number("contrast", at: t), plus: f.number("brightness", at: t))
        }
    )
}
