import GPUEncodeCore
import GPUEncodeFilters

/// Upgrades older preset files to the current version, one small function per version step
/// (HandBrake's approach): version N is upgraded by `steps[N]` to N + 1, then on, so every old
/// version keeps loading and each step stays simple. Values keep their line:column, so errors in an
/// upgraded file still point into it.
///
/// Version 0 is the pre-release format, written the way GPUImage names things:
///
///     {"version": 0, "name": "old", "filters": [
///         {"type": "GPUImageGaussianBlurFilter", "blurRadiusInPixels": 3},
///         {"type": "GPUImageScreenBlendFilter", "with": {"type": "GPUImageSolidColorGenerator", "color": "#204060"}}]}
///
/// 0 → 1: `"type": "GPUImage<Name>Filter"` becomes `"filter": "<name>"` (blends: `GPUImage<Mode>BlendFilter`,
/// generators: `GPUImage<Name>Generator`), and GPUImage's property names become ours where they differ
/// (`colorMatrix` → `matrix`, `blurRadiusInPixels` → `sigma`/`radius`, `vignetteStart` → `start`, ...);
/// see `renamedParameters`.
///
/// 1 → 2 (HEVC and AV1): `"encode": {"x264Preset": NAME}` becomes `"speed": NAME`, the codec-neutral
/// name of the same scale (`--speed`, formerly `--x264-preset`).
public enum PresetMigration {
    /// `steps[n]` turns version n into version n + 1.
    static let steps: [@Sendable (JSONValue) -> JSONValue] = [{ upgrade0to1($0) }, { upgrade1to2($0) }]

    /// `root` (a preset object of `version`) upgraded to `Preset.currentVersion`.
    public static func upgrade(_ root: JSONValue, from version: Int) -> JSONValue {
        var value = root
        var v = max(version, Preset.oldestVersion)
        while v < Preset.currentVersion {
            value = steps[v](value)
            v += 1
        }
        return value
    }

    /// The preset's version member (nil when missing or not a whole number).
    public static func version(of root: JSONValue) -> Int? {
        guard case .number(let n)? = root["version"]?.kind else { return nil }
        return Int(wholeNumber: n)
    }

    // MARK: - 0 → 1

    /// GPUImage class names whose filter is named differently here than the usual
    /// `GPUImage` + Name + `Filter` pattern gives.
    static let gpuImageExceptions: [String: String] = [
        "GPUImageRGBFilter": "rgb",
        "GPUImageHueFilter": "hue",
        "GPUImageBulgeDistortionFilter": "bulge",
        "GPUImagePinchDistortionFilter": "pinch",
        "GPUImageStretchDistortionFilter": "stretch",
        "GPUImageGaussianSelectiveBlurFilter": "selectiveBlur",
        "GPUImageSourceOverBlendFilter": "normal",
        "GPUImageNormalBlendFilter": "normal",
        "GPUImageSolidColorGenerator": "solidColor",
        "GPUImageAverageColor": "averageColor",
        "GPUImageCustomFilter": "shader",
    ]

    /// GPUImage's property names that differ from ours, by (our) filter name.
    public static let renamedParameters: [String: [String: String]] = [
        "colorMatrix": ["colorMatrix": "matrix"],
        "gaussianBlur": ["blurRadiusInPixels": "sigma"],
        "unsharpMask": ["blurRadiusInPixels": "sigma"],
        "boxBlur": ["blurRadiusInPixels": "radius"],
        "vignette": ["vignetteCenter": "center", "vignetteColor": "color", "vignetteStart": "start", "vignetteEnd": "end"],
        "lookup": ["lookupImage": "image"],
        "dissolve": ["mix": "mixturePercent"],
    ]

    static let gpuImageNames: [String: String] = {
        var map: [String: String] = [:]
        for d in FilterRegistry.all {
            let cap = d.name.prefix(1).uppercased() + d.name.dropFirst()
            map["GPUImage\(cap)Filter"] = d.name
            if case .blend = d.kind {
                map["GPUImage\(cap.hasSuffix("Blend") ? String(cap.dropLast(5)) : cap)BlendFilter"] = d.name
            }
            if d.category == .generator { map["GPUImage\(cap)Generator"] = d.name }
        }
        map.merge(gpuImageExceptions) { _, new in new }
        return map
    }()

    /// Our name for a GPUImage class name; an unknown one loses its `GPUImage` prefix and `Filter`
    /// suffix, so the validator can still suggest the nearest filter.
    public static func filterName(forGPUImageType type: String) -> String {
        if let name = gpuImageNames[type] { return name }
        var s = Substring(type)
        if s.hasPrefix("GPUImage") { s = s.dropFirst(8) }
        for suffix in ["BlendFilter", "Filter", "Generator"] where s.hasSuffix(suffix) && s.count > suffix.count {
            s = s.dropLast(suffix.count)
            break
        }
        return s.prefix(1).lowercased() + s.dropFirst()
    }

    static func upgrade0to1(_ root: JSONValue) -> JSONValue {
        guard case .object(var members) = root.kind else { return root }
        for i in members.indices {
            switch members[i].key {
            case "version":
                members[i].value = JSONValue(.number(1), line: members[i].value.line, column: members[i].value.column)
            case "filters":
                if case .array(let items) = members[i].value.kind {
                    members[i].value = JSONValue(.array(items.map(filter0to1)), line: members[i].value.line, column: members[i].value.column)
                }
            default: break
            }
        }
        return JSONValue(.object(members), line: root.line, column: root.column)
    }

    static func filter0to1(_ value: JSONValue) -> JSONValue {
        guard case .object(var members) = value.kind,
              let t = members.firstIndex(where: { $0.key == "type" }), case .string(let type) = members[t].value.kind
        else { return value }
        let name = filterName(forGPUImageType: type)
        members[t] = (key: "filter", value: JSONValue(.string(name), line: members[t].value.line, column: members[t].value.column))
        let renames = renamedParameters[name] ?? [:]
        for i in members.indices {
            if let new = renames[members[i].key], !members.contains(where: { $0.key == new }) { members[i].key = new }
            if members[i].key == "with" { members[i].value = filter0to1(members[i].value) }
        }
        return JSONValue(.object(members), line: value.line, column: value.column)
    }

    // MARK: - 1 → 2

    /// Version 2 and `encode.x264Preset` renamed `speed` (unless the file has both: then the
    /// leftover x264Preset is reported as unknown rather than silently dropped).
    static func upgrade1to2(_ root: JSONValue) -> JSONValue {
        guard case .object(var members) = root.kind else { return root }
        for i in members.indices {
            switch members[i].key {
            case "version":
                members[i].value = JSONValue(.number(2), line: members[i].value.line, column: members[i].value.column)
            case "encode":
                let value = members[i].value
                guard case .object(var settings) = value.kind, !settings.contains(where: { $0.key == "speed" }) else { break }
                for j in settings.indices where settings[j].key == "x264Preset" { settings[j].key = "speed" }
                members[i].value = JSONValue(.object(settings), line: value.line, column: value.column)
            default: break
            }
        }
        return JSONValue(.object(members), line: root.line, column: root.column)
    }
}
