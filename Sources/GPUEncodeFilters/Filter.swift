import GPUEncodeCore

/// A filter is GLSL plus typed parameters. Point filters are a function of one colour (and its
/// position), so the chain fuses consecutive ones into one fragment shader (Movit's approach) and a
/// run of them costs one pass. Sampling filters read their input at other positions and get passes of
/// their own; blends take a second input.
public struct FilterDeclaration: Sendable {
    public let name: String
    public let summary: String
    public let category: FilterCategory
    public let parameters: [ParameterDeclaration]
    public let kind: FilterKind
    /// Textures the GLSL samples (`uniform sampler2D {{p}}NAME` / `sampler3D`), built once per run
    /// from the parameter values (a tone curve, a LUT file, an overlay image).
    public let resources: (@Sendable (FilterInstance, ResourceContext) throws -> [String: FilterResource])?
    /// The size of the filter's output for an input of `w` x `h` (geometry filters); nil keeps it.
    public let outputSize: (@Sendable (_ w: Int, _ h: Int, FilterInstance) -> (Int, Int))?
    /// Checks across parameters (min below max, ...); returns a message naming the problem.
    public let check: (@Sendable (FilterInstance) -> String?)?
    /// Passes chosen from the parameters, overriding the kind's fixed list: each pass's GLSL and
    /// the factor its output is smaller than the filter's output by (2: half width and height).
    /// The last pass must be at full size (divisor 1).
    public let passPlan: (@Sendable (FilterInstance) -> [(glsl: String, divisor: Int)])?
    /// Uniform float arrays computed from the parameters and the input size in pixels (blur
    /// weights and offsets), declared in the GLSL as `uniform float {{p}}NAME[N]`.
    public let arrays: (@Sendable (FilterInstance, _ inputWidth: Int, _ inputHeight: Int) -> [String: [Float]])?
    /// A texture that changes from frame to frame (a second video), sampled as
    /// `uniform sampler2D {{p}}frame`. Called once per run, on the thread that renders, to open the
    /// source; the renderer asks it for the picture at each frame's time and uploads it only when it
    /// changes. Check the file when the preset loads with `resources` (see VideoInputFilter).
    public var dynamic: (@Sendable (FilterInstance, ResourceContext) throws -> DynamicSource)? = nil
    /// The filter as an affine map of R'G'B' for these values at a time in seconds (`ColourAffine`),
    /// for point filters that are one: the same function as the GLSL, as numbers, so a renderer may
    /// run or compose it without a shader. nil (the default): not affine, or not declared.
    public var affine: (@Sendable (FilterInstance, _ time: Double) -> ColourAffine?)? = nil
    /// The filter as a table per channel (`ChannelTables`), for point filters that look their
    /// colour up that way: the same function as the GLSL, as numbers. nil: not declared.
    public var lookup: (@Sendable (FilterInstance) -> ChannelTables?)? = nil
    /// Textures computed from the parameters and the input size in pixels, once per pass set up
    /// (the output scaler's per-column Lanczos weights), sampled as `uniform sampler2D {{p}}NAME`:
    /// `arrays` for tables too large for uniforms.
    public var tables: (@Sendable (FilterInstance, _ inputWidth: Int, _ inputHeight: Int) -> [String: FilterResource])? = nil
    /// Texels added on every side of the reduced passes (`passPlan` divisors above 1), in their own
    /// pixels, set as `uniform float {{p}}margin`: the reduced picture then covers the clamped
    /// surroundings of the picture too, so a blur computed small treats the borders as the full-size
    /// one does (the edge pixel repeated), not its coarser reduced edge.
    public let passMargin: (@Sendable (FilterInstance) -> Int)?
    /// A first pass that reads the source itself instead of the chain's full-size source pass,
    /// used when the filter comes first (no point filters before it) and the source can give
    /// `vec4 sourceQuad(vec2 corner)`: the mean of the four source pixels around a pixel corner of
    /// the upright picture (in pixels, clamped to the edge). Replaces the plan's first pass, with
    /// the same divisor. why: on software GL the full-size source pass of a reduced blur cost more
    /// than the rest of the blur; a pass that only samples the source where the reduced picture
    /// needs it skips writing and rereading a full-size texture.
    public var sourcePass: (@Sendable (FilterInstance) -> String?)? = nil
    /// The divisor d when the plan's last pass only scales its reduced input back up bilinearly,
    /// reading `texture(input, ((p + 0.5) / d + margin) / inputSize)` for the pixel p: a renderer
    /// whose next pass reads the chain's pixels may read them so itself and skip that pass (the
    /// video renderer's NV12 conversion does: one full-size pass less).
    public var finalUpsample: (@Sendable (FilterInstance) -> Int?)? = nil

    public init(name: String, summary: String, category: FilterCategory, parameters: [ParameterDeclaration] = [],
                kind: FilterKind,
                resources: (@Sendable (FilterInstance, ResourceContext) throws -> [String: FilterResource])? = nil,
                outputSize: (@Sendable (_ w: Int, _ h: Int, FilterInstance) -> (Int, Int))? = nil,
                check: (@Sendable (FilterInstance) -> String?)? = nil,
                arrays: (@Sendable (FilterInstance, _ inputWidth: Int, _ inputHeight: Int) -> [String: [Float]])? = nil,
                passPlan: (@Sendable (FilterInstance) -> [(glsl: String, divisor: Int)])? = nil,
                passMargin: (@Sendable (FilterInstance) -> Int)? = nil,
                affine: (@Sendable (FilterInstance, _ time: Double) -> ColourAffine?)? = nil,
                lookup: (@Sendable (FilterInstance) -> ChannelTables?)? = nil) {
        self.affine = affine
        self.lookup = lookup
        self.passPlan = passPlan
        self.passMargin = passMargin
        self.name = name
        self.summary = summary
        self.category = category
        self.parameters = parameters
        self.kind = kind
        self.resources = resources
        self.outputSize = outputSize
        self.check = check
        self.arrays = arrays
    }

    /// A point filter: `glsl` declares `vec4 {{p}}apply(vec4 c, vec2 uv)` and its uniforms; `affine`, the
    /// same function as an affine map of R'G'B', where it is one.
    public init(name: String, summary: String, category: FilterCategory = .color, parameters: [ParameterDeclaration] = [],
                glsl: String,
                resources: (@Sendable (FilterInstance, ResourceContext) throws -> [String: FilterResource])? = nil,
                check: (@Sendable (FilterInstance) -> String?)? = nil,
                affine: (@Sendable (FilterInstance, _ time: Double) -> ColourAffine?)? = nil) {
        self.init(name: name, summary: summary, category: category, parameters: parameters, kind: .point(glsl: glsl),
                  resources: resources, check: check)
        self.affine = affine
    }

    public func parameter(named name: String) -> ParameterDeclaration? {
        parameters.first { $0.name == name }
    }

    public var isPoint: Bool { if case .point = kind { return true } else { return false } }

    /// Whether a parameter may be keyframed: numbers, vectors and colours that reach the shader as
    /// uniforms. Parameters that shape passes, tables or textures (a blur's sigma, curve points) are
    /// fixed for the run, so in filters with those only the mixing amounts animate.
    public func isAnimatable(_ p: ParameterDeclaration) -> Bool {
        switch p.type {
        case .float, .int, .vector, .color: break
        default: return false
        }
        if arrays == nil && tables == nil && resources == nil && passPlan == nil && outputSize == nil { return true }
        return ["intensity", "opacity", "mix", "mixturePercent"].contains(p.name)
    }
}

/// Where a chain's filters compute (a preset's `"light"`): on the gamma-encoded R'G'B' of the video
/// (GPUImage's way, the default) or on linear RGB, linearised once at the chain's start and
/// re-encoded at its end (Movit's way), in half float.
public enum FilterLight: String, Sendable, CaseIterable {
    case gamma
    case linear
}

public enum FilterCategory: String, Sendable, CaseIterable {
    case color = "Colour"
    case lookup = "Lookup tables"
    case geometry = "Geometry"
    case blur = "Blur and sharpen"
    case stylize = "Edges and stylising"
    case generator = "Generators"
    case blend = "Blends"
    case custom = "Custom"
    case analysis = "Analysis"
}

/// How a filter's GLSL is put together. In every snippet `{{p}}` becomes a prefix unique to the
/// filter's place in the chain (uniforms are named `{{p}}<parameter>`), and these are in scope:
/// `uniform vec2 outSize` (the pass's output in pixels), `uniform float time` (seconds),
/// `uniform float frameIndex`. Texture coordinates `uv` run from (0, 0) at the top-left pixel's
/// corner to (1, 1) at the bottom-right, as GPUImage's `textureCoordinate`.
public enum FilterKind: Sendable {
    /// `vec4 {{p}}apply(vec4 c, vec2 uv)`: the colour at uv, from the colour c there. Fused.
    case point(glsl: String)
    /// One pass per entry of `passes`, each defining `vec4 {{p}}run(vec2 uv)`. A pass reads
    /// `{{p}}input` (the previous pass's output; the filter's input in the first pass) and
    /// `{{p}}source` (always the filter's input), both linear-filtered and clamped at the edges, with
    /// `{{p}}inputSize` and `{{p}}sourceSize` in pixels. `glsl` (uniforms, helpers) is in every pass.
    /// Intermediate results are 8-bit RGBA, as in GPUImage.
    case sampling(glsl: String, passes: [String])
    /// `vec4 {{p}}blend(vec4 base, vec4 overlay)`: combines the chain so far with the filter's
    /// second input (its `with` member: a colour, a generator or an image). Fused: the second input is
    /// evaluated at the same position.
    case blend(glsl: String)
    /// The mean colour of the filter's input, by repeated 4x4 reductions on the GPU; the picture
    /// passes through unchanged. Later filters (and custom shaders) read it as the built-in
    /// `uniform vec4 averageColor`; `--stats` prints it per frame.
    case average
}

/// What a filter builds from its parameters and files when the preset loads, once per run: a
/// texture it samples, or a uniform array (a tone-curve table, a .cube file's sizes).
public enum FilterResource: Sendable {
    /// RGBA, row 0 at the top, `bytes` 8-bit or `floats` (then stored as RGBA16F/32F).
    case image2D(width: Int, height: Int, data: TexelData, linear: Bool)
    /// A 3-D RGBA table, red fastest (the .cube order).
    case table3D(size: Int, data: [Float])
    /// `uniform float NAME[N]` or `uniform vec4 NAME[N / 4]` (four floats per element).
    case uniforms([Float])
}

/// A picture that changes over time, owned by one renderer for one run (made and used on the
/// thread with the GL context). See `FilterDeclaration.dynamic`.
public protocol DynamicSource: AnyObject {
    /// The texture's size in pixels, fixed for the run.
    var width: Int { get }
    var height: Int { get }
    /// The picture to show at `time` (seconds from the start of the media).
    func frame(at time: Double) -> DynamicFrame
}

/// RGBA8 rows, top row first, `width * 4` bytes each, premultiplied by alpha. `pixels` stays valid
/// until the next `frame(at:)`. `serial` names the picture: equal serials mean equal pictures, so
/// the texture is uploaded again only when it changes.
public struct DynamicFrame {
    public var serial: Int64
    public var pixels: UnsafeRawPointer

    public init(serial: Int64, pixels: UnsafeRawPointer) {
        self.serial = serial
        self.pixels = pixels
    }
}

public enum TexelData: Sendable {
    case bytes([UInt8])
    case floats([Float])
    /// 32-bit floats (RGBA32F), read with texelFetch only (not filterable on every ES 3 GPU):
    /// for tables that must keep single precision (filter weights).
    case exactFloats([Float])
}

/// A problem with a filter's parameters or the files it reads, in words for the preset author.
public struct FilterError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What resource builders may use: where the preset lives, so file references resolve beside it,
/// and where else it may read (see AllowedPaths).
public struct ResourceContext: Sendable {
    /// The directory of the preset file, or nil for built-ins and tests (paths then resolve from the
    /// working directory unchecked, and built-ins read only the files embedded from presets/assets).
    public var baseDirectory: String?
    public var builtin: Bool
    /// The preset's file (or `builtin:NAME`), for errors found later (shader compilation).
    public var origin: String?
    /// Folders beyond `baseDirectory` that file references may point into (`--allow-path`).
    public var allowed: AllowedPaths
    /// A built-in preset's embedded files by name (`assets/NAME`), from the presets layer, which
    /// embeds them; nil when there are none.
    public var embeddedFile: (@Sendable (String) -> [UInt8]?)?

    public init(baseDirectory: String?, builtin: Bool = false, origin: String? = nil, allowed: AllowedPaths = .none,
                embeddedFile: (@Sendable (String) -> [UInt8]?)? = nil) {
        self.baseDirectory = baseDirectory
        self.builtin = builtin
        self.origin = origin
        self.allowed = allowed
        self.embeddedFile = embeddedFile
    }

    /// How a preset names a file embedded in the program: `builtin:assets/amatorka.png`.
    public static let builtinPrefix = "builtin:"

    /// The path as written, joined to the preset's folder when relative (for messages and for
    /// writing presets back); `checkedPath` is what to open.
    public func resolve(_ path: String) -> String {
        guard !path.hasPrefix("/"), let base = baseDirectory else { return path }
        return base + "/" + path
    }

    /// The file a parameter names, canonical, when the preset may read it: under its own folder
    /// or an allowed one, symlinks followed, and a regular file (a `FilterError` otherwise).
    ///
    /// Every file a preset names passes here, also those handed to FFmpeg by path (`video`),
    /// which would block forever opening a FIFO: so the kind of file is checked here, at once,
    /// rather than only where the bytes are read.
    public func checkedPath(_ path: String) throws -> String {
        if builtin { throw FilterError("\(path): a built-in preset reads only its own embedded files") }
        let checked = try baseDirectory.map { try allowed.contain(resolve(path), named: path, presetDirectory: $0) } ?? path
        do { try requireRegularFile(checked, canonical: baseDirectory != nil) } catch let e as FileReadError {
            throw FilterError("cannot read \(resolve(path)): \(e.reason)")
        }
        return checked
    }

    /// The bytes of a file a parameter names: a regular file within `kind`'s size cap.
    public func readFile(_ path: String, kind: ReadKind) throws -> [UInt8] {
        if builtin, let embedded = embeddedFile?(path) { return embedded }
        // `builtin:assets/NAME`: a file embedded in the program, which any preset may name (the
        // program's own data, not the file system), so `presets show` of a built-in loads anywhere.
        if path.hasPrefix(Self.builtinPrefix) {
            guard let embedded = embeddedFile?(String(path.dropFirst(Self.builtinPrefix.count))) else {
                throw FilterError("\(path): no such file in the program (built-in files are \(Self.builtinPrefix)assets/NAME)")
            }
            return embedded
        }
        let checked = try checkedPath(path)
        do { return try readFileSafely(checked, kind: kind, canonical: baseDirectory != nil) } catch let e as FileReadError {
            throw FilterError("cannot read \(resolve(path)): \(e.reason)")
        }
    }

    /// A file a parameter names, opened for streaming (large files such as .cube tables).
    func openFile(_ path: String, kind: ReadKind) throws -> SafeFile {
        if path.hasPrefix(Self.builtinPrefix) { throw FilterError("\(path): built-in files are pictures; this parameter reads a file of its own") }
        let checked = try checkedPath(path)
        do { return try SafeFile(checked, kind: kind, canonical: baseDirectory != nil) } catch let e as FileReadError {
            throw FilterError("cannot read \(resolve(path)): \(e.reason)")
        }
    }
}

public enum ParameterType: Sendable, Equatable {
    case float(range: ClosedRange<Double>)
    case int(range: ClosedRange<Int>)
    case bool
    /// vec2, vec3 or vec4 with every component in range.
    case vector(count: Int, range: ClosedRange<Double>)
    /// RGBA in 0...1: `"#rrggbb"`, `"#rrggbbaa"`, `"rgb(r,g,b)"`, `"rgba(r,g,b,a)"` (0-255 and alpha 0-1) or `[r, g, b(, a)]` (0-1).
    case color
    /// 4x4 matrix given as 4 rows of 4 numbers; row i is output channel i (R, G, B, A) over inputs R, G, B, A.
    case matrix4
    /// One of a fixed list of words; the uniform is its index (int).
    case choice([String])
    /// A file, relative to the preset file. An empty string means none.
    case file(extensions: [String])
    /// Control points `[[x, y], ...]` with x and y in 0...1 and x increasing.
    case points
    /// Free text (shader source).
    case text

    public var typeName: String {
        switch self {
        case .float: return "number"
        case .int: return "integer"
        case .bool: return "boolean"
        case .vector(let n, _): return "vec\(n)"
        case .color: return "colour"
        case .matrix4: return "4x4 matrix"
        case .choice: return "choice"
        case .file: return "file"
        case .points: return "points"
        case .text: return "text"
        }
    }

    public var rangeDescription: String {
        switch self {
        case .float(let r): return "\(formatNumber(r.lowerBound))...\(formatNumber(r.upperBound))"
        case .int(let r): return "\(r.lowerBound)...\(r.upperBound)"
        case .vector(_, let r): return "each \(formatNumber(r.lowerBound))...\(formatNumber(r.upperBound))"
        case .choice(let words): return words.joined(separator: " | ")
        case .file(let ext): return ext.map { "." + $0 }.joined(separator: ", ")
        case .color: return "RGBA 0...1"
        case .points: return "[x, y] pairs in 0...1"
        case .bool, .matrix4, .text: return ""
        }
    }
}

public indirect enum ParameterValue: Sendable, Equatable, CustomStringConvertible {
    /// A value that changes over the output's time (seconds), for numbers, vectors and colours.
    case animated(Keyframes)
    case float(Double)
    case int(Int)
    case bool(Bool)
    /// vectors and colours (RGBA, 0...1)
    case vector([Double])
    case matrix4([Double])
    /// choices, files and text
    case string(String)
    case points([[Double]])

    public var description: String {
        switch self {
        case .animated(let k): return k.description
        case .float(let v): return formatNumber(v)
        case .int(let v): return String(v)
        case .bool(let b): return b ? "true" : "false"
        case .vector(let v): return "[" + v.map(formatNumber).joined(separator: ", ") + "]"
        case .matrix4(let m):
            let rows = (0..<4).map { r in "[" + m[(r * 4)..<(r * 4 + 4)].map(formatNumber).joined(separator: ", ") + "]" }
            return "[" + rows.joined(separator: ", ") + "]"
        case .string(let s): return "\"\(s)\""
        case .points(let p): return "[" + p.map { "[" + $0.map(formatNumber).joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
        }
    }

    /// Numeric views; an animated value gives its value at time 0.
    public var double: Double {
        switch self {
        case .animated(let k): return k.value(at: 0).double
        case .float(let v): return v
        case .int(let v): return Double(v)
        case .bool(let b): return b ? 1 : 0
        default: return 0
        }
    }

    public var doubles: [Double] {
        switch self {
        case .animated(let k): return k.value(at: 0).doubles
        case .vector(let v), .matrix4(let v): return v
        case .float, .int, .bool: return [double]
        default: return []
        }
    }

    public var string: String { if case .string(let s) = self { return s } else { return "" } }
}

/// Keyframes `[[time, value], ...]` with linear or smooth (smoothstep) easing between them; the
/// first value holds before the first time and the last after the last.
public struct Keyframes: Sendable, Equatable, CustomStringConvertible {
    public enum Easing: String, Sendable, CaseIterable { case linear, smooth }
    public var times: [Double]
    public var values: [ParameterValue]
    public var easing: Easing

    public init(times: [Double], values: [ParameterValue], easing: Easing) {
        self.times = times
        self.values = values
        self.easing = easing
    }

    public func value(at t: Double) -> ParameterValue {
        guard let first = times.first, t > first else { return values[0] }
        guard let i = times.firstIndex(where: { $0 >= t }) else { return values[values.count - 1] }
        var u = (t - times[i - 1]) / max(times[i] - times[i - 1], 1e-9)
        if easing == .smooth { u = u * u * (3 - 2 * u) }
        let a = values[i - 1], b = values[i]
        switch (a, b) {
        case (.int(let x), .int(let y)): return .int(Int((Double(x) + (Double(y) - Double(x)) * u).rounded()))
        case (.float(let x), .float(let y)): return .float(x + (y - x) * u)
        case (.vector(let x), .vector(let y)): return .vector(zip(x, y).map { $0 + ($1 - $0) * u })
        default: return u < 0.5 ? a : b
        }
    }

    public var description: String {
        let frames = zip(times, values).map { "[\(formatNumber($0)), \($1)]" }.joined(separator: ", ")
        return "{\"keyframes\": [\(frames)], \"easing\": \"\(easing.rawValue)\"}"
    }
}

public struct ParameterDeclaration: Sendable {
    public let name: String
    public let type: ParameterType
    public let defaultValue: ParameterValue
    public let summary: String

    public init(_ name: String, _ type: ParameterType, default defaultValue: ParameterValue, _ summary: String) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.summary = summary
    }

    public static func float(_ name: String, default value: Double, range: ClosedRange<Double>, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .float(range: range), default: .float(value), summary)
    }

    public static func int(_ name: String, default value: Int, range: ClosedRange<Int>, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .int(range: range), default: .int(value), summary)
    }

    public static func bool(_ name: String, default value: Bool, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .bool, default: .bool(value), summary)
    }

    public static func vec2(_ name: String, default value: [Double], range: ClosedRange<Double>, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .vector(count: 2, range: range), default: .vector(value), summary)
    }

    public static func vec3(_ name: String, default value: [Double], range: ClosedRange<Double>, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .vector(count: 3, range: range), default: .vector(value), summary)
    }

    public static func color(_ name: String, default value: [Double], _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .color, default: .vector(value.count == 3 ? value + [1] : value), summary)
    }

    public static func choice(_ name: String, _ words: [String], default value: String, _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .choice(words), default: .string(value), summary)
    }

    public static func file(_ name: String, extensions: [String], _ summary: String) -> ParameterDeclaration {
        ParameterDeclaration(name, .file(extensions: extensions), default: .string(""), summary)
    }
}

/// A filter with its parameter values resolved (defaults filled in) and, for a blend, its second input.
public struct FilterInstance: Sendable {
    public let declaration: FilterDeclaration
    public let values: [String: ParameterValue]
    /// A blend's second input: a generator or image filter, evaluated at the same position.
    public let overlay: [FilterInstance]
    /// Where file parameters resolve.
    public let context: ResourceContext
    /// Its textures, once `prepared()` has built them (loading and checking any files it names).
    public private(set) var resources: [String: FilterResource]? = nil
    /// The name other filters use to take this filter's output as an input (`"id"` in a preset).
    public var id: String? = nil

    /// The earlier node (an `id`, or `source` for the chain's input) a blend takes as its second input.
    public var nodeReference: String? {
        guard let o = overlay.first, o.declaration.name == NodeInputFilter.name else { return nil }
        return o.string("node")
    }

    public init(_ declaration: FilterDeclaration, values: [String: ParameterValue] = [:], overlay: FilterInstance? = nil,
                context: ResourceContext = ResourceContext(baseDirectory: nil)) {
        self.declaration = declaration
        var resolved: [String: ParameterValue] = [:]
        for p in declaration.parameters { resolved[p.name] = values[p.name] ?? p.defaultValue }
        self.values = resolved
        self.overlay = overlay.map { [$0] } ?? []
        self.context = context
    }

    /// Builds the textures now, so a bad LUT or image is reported when the preset loads rather
    /// than when the GPU starts. Errors are `FilterError`s with a message to show after the file name.
    public func prepared() throws -> FilterInstance {
        var copy = self
        if resources == nil, let build = declaration.resources { copy.resources = try build(self, context) }
        return copy
    }

    public subscript(_ name: String) -> ParameterValue { values[name] ?? .float(0) }
    public func double(_ name: String) -> Double { self[name].double }
    public func doubles(_ name: String) -> [Double] { self[name].doubles }
    public func string(_ name: String) -> String { self[name].string }

    /// The name of the filter by itself; `filter(with: overlay)` for a blend.
    public func with(_ overlay: FilterInstance) -> FilterInstance {
        FilterInstance(declaration, values: values, overlay: overlay, context: context)
    }
}

/// A blend's second input when it is an earlier node of the chain: that node's picture, sampled at
/// the same position. Made by the preset loader for `"with": {"node": NAME}`; not listed as a filter.
public enum NodeInputFilter {
    public static let name = "nodeInput"
    public static let declaration = FilterDeclaration(
        name: name, summary: "The output of an earlier node of the chain.", category: .generator,
        parameters: [ParameterDeclaration("node", .text, default: .string("source"), "the node's id, or source")],
        glsl: """
        uniform highp sampler2D {{p}}picture;
        vec4 {{p}}apply(vec4 c, vec2 uv) { return texture({{p}}picture, uv); }
        """
    )

    public static func instance(_ node: String) -> FilterInstance {
        FilterInstance(declaration, values: ["node": .string(node)])
    }
}

/// Every built-in filter, by preset name. Each family file contributes its list.
public enum FilterRegistry {
    public static let all: [FilterDeclaration] = {
        var list: [FilterDeclaration] = [IdentityFilter.declaration]
        list += ColorFilters.all
        list += LookupFilters.all
        list += GeometryFilters.all
        list += BlurFilters.all
        list += StylizeFilters.all
        list += GeneratorFilters.all
        list += BlendFilters.all
        list += CustomFilters.all
        return list
    }()

    private static let byName: [String: FilterDeclaration] = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })

    public static func named(_ name: String) -> FilterDeclaration? { byName[name] }
}
