import GPUEncodeCore
import GPUEncodeFilters
import GPUEncodePresets

/// What the fuzzer feeds and the tests replay: every parser that reads a file a user or a
/// downloaded preset pack can hand us, run on the same bytes. All of them, rather than one chosen
/// by a first byte, so a seed is a plain file (a preset, a .cube, an .acv) that reads the same in
/// an editor, and a crash file found by one parser is replayed through the others too.
///
/// The contract is the one the issue asks of the whole program: on any input each parser returns
/// or throws; it never traps, overflows the stack, hangs or allocates without bound.
public enum ParserFuzzHarness {
    /// The origin the preset reader gets: a path in a folder that does not exist, so that a
    /// preset's relative references (LUTs, images, `extends`) fail to open instead of reading
    /// whatever lies in the fuzzer's working directory.
    public static let presetOrigin = "/nonexistent-gpuencode-fuzz/fuzz.json"

    public static func run(_ bytes: [UInt8]) {
        json(bytes)
        preset(bytes)
        cube(bytes)
        acv(bytes)
    }

    /// The JSON parser alone, then the GPUImage v0 → v1 migration on whatever tree it gave (the
    /// migration takes any JSON, not only a v0 preset, so it must cope with every shape).
    static func json(_ bytes: [UInt8]) {
        guard let root = try? JSONParser.parse(bytes: bytes) else { return }
        _ = PresetMigration.upgrade(root, from: 0)
        _ = PresetMigration.version(of: root)
        _ = JSONWriter.write(root)
    }

    /// The whole preset reader: JSON, version migration, filters, parameters, graphs, shaders'
    /// declarations; no GL context is made.
    static func preset(_ bytes: [UInt8]) {
        let check = Preset.check(bytes: bytes, origin: presetOrigin)
        for d in check.errors + check.warnings { _ = d.description }
    }

    static func cube(_ bytes: [UInt8]) {
        _ = try? CubeFile.parse(bytes)
    }

    /// Parsed curves go on into the table the shader gets, which interpolates between the points.
    static func acv(_ bytes: [UInt8]) {
        guard let curves = try? ACVFile.parse(bytes) else { return }
        _ = ToneCurveFilter.table(curves)
    }
}
