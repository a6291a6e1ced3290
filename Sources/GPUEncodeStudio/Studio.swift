import Glibc
import GPUEncodeCore
import GPUEncodeKit
import Hummingbird
import Logging
import NIOCore

/// `gpuencode studio`: a preset editor in the browser. A web server on 127.0.0.1 serves one page
/// (studio.html) and a small JSON API; every picture comes from the same `Preview.Session` path as
/// `gpuencode preview` (decode, colour conversion, rotation, the preset's filters on the GPU),
/// rendered on one GL thread. The API is described in docs/studio.md.
public enum Studio {
    public struct Options: Sendable {
        public var input: String
        /// The preset's text and where it lives: its file, or nil for a built-in (then `name`.json in
        /// the working directory is where it resolves files and is saved).
        public var presetText: String
        public var presetName: String
        public var presetPath: String?
        /// `--compare-with`: preset B's text, shown instead of the original.
        public var compareText: String?
        public var compareName: String?
        public var at: Double?
        public var port: Int
        public var allowed: AllowedPaths
        public var gpu: GPUSelection

        public init(input: String, presetText: String, presetName: String, presetPath: String?, compareText: String?,
                    compareName: String?, at: Double?, port: Int, allowed: AllowedPaths, gpu: GPUSelection) {
            self.input = input
            self.presetText = presetText
            self.presetName = presetName
            self.presetPath = presetPath
            self.compareText = compareText
            self.compareName = compareName
            self.at = at
            self.port = port
            self.allowed = allowed
            self.gpu = gpu
        }
    }

    /// Request bodies larger than this are refused (413): a preset is a few KiB.
    static let maxBody = 1 << 20

    /// Opens the input and the GL context, binds 127.0.0.1:`port` and serves until SIGINT or
    /// SIGTERM. `ready` gets the page's URL (with the session's token) once the server listens.
    public static func serve(_ options: Options, ready: @escaping @Sendable (String) -> Void) async throws {
        let folder = options.presetPath.map { splitPath(absolutePath($0)).dir } ?? absolutePath(".")
        let home = realPath(folder) ?? folder
        let origin = options.presetPath.map(absolutePath) ?? "\(home)/\(options.presetName).json"
        // The session (its GL context and decoded frame) lives on one thread; requests hand it work.
        let thread = try SerialThread(name: "gpuencode-studio-gl")
        let s = try thread.sync {
            try StudioSession(input: options.input, at: options.at, origin: origin, allowed: options.allowed, gpu: options.gpu)
        }
        let facts = try await thread.run {
            (s.preview.width, s.preview.height, s.preview.time, s.preview.duration, s.preview.frameRate, s.preview.renderer)
        }
        let token = randomToken()
        let port = BoundPort()
        let saver = PresetSaver(home: home, allowed: options.allowed)
        let state: JSONValue = .object([
            ("input", .string(splitPath(options.input).base)),
            ("width", .number(facts.0)), ("height", .number(facts.1)),
            ("duration", facts.3.map { .number($0) } ?? .null),
            ("fps", facts.4.map { .number($0) } ?? .null),
            ("time", .number(facts.2 ?? 0)),
            ("renderer", .string(facts.5)),
            ("preset", .object([
                ("text", .string(options.presetText)), ("name", .string(options.presetName)),
                ("path", options.presetPath.map { .string(absolutePath($0)) } ?? .null),
                ("saveName", .string(splitPath(origin).base)),
            ])),
            ("compare", options.compareText.map { .object([("text", .string($0)), ("name", .string(options.compareName ?? ""))]) } ?? .null),
            ("files", .strings(files(in: home, allowed: options.allowed))),
            ("filters", FilterCatalog.json()),
            ("maxBody", .number(maxBody)),
        ])

        let router = Router()
        router.add(middleware: StudioGuard(token: token, port: port))
        router.get("/") { _, _ in StudioResponse.html(PackageResources.studio_html) }
        router.get("/api/state") { _, _ in StudioResponse.json(state) }
        router.post("/api/render") { request, _ in
            let body: JSONValue
            switch await readJSON(request) { case .success(let v): body = v; case .failure(let refusal): return refusal.response }
            guard case .string(let text)? = body["preset"]?.kind else { return StudioResponse.error(.badRequest, "the body needs \"preset\": the preset's text") }
            var compare: String?
            if case .string(let c)? = body["compare"]?.kind { compare = c }
            var time = facts.2 ?? 0
            if let t = body["time"] {
                guard case .number(let n) = t.kind, Preview.timeRange.contains(n) else { return StudioResponse.error(.badRequest, "\"time\" must be seconds from 0") }
                time = n
            }
            let started = monotonicSeconds()
            do {
                let pictures = try await thread.run { () -> StudioSession.Pictures in
                    let b: Preset
                    do { b = try s.preset(text) } catch let p as StudioSession.PresetProblem { throw Located(problem: p, which: "preset") }
                    var a: Preset?
                    if let compare {
                        do { a = try s.preset(compare) } catch let p as StudioSession.PresetProblem { throw Located(problem: p, which: "compare") }
                    }
                    return try s.render(preset: b, compare: a, compareText: compare, at: time)
                }
                return StudioResponse.pictures(pictures, milliseconds: Int(((monotonicSeconds() - started) * 1000).rounded()))
            } catch let e as Located {
                return StudioResponse.error(.unprocessableContent, e.problem.message, line: e.problem.line, column: e.problem.column, which: e.which)
            } catch let e as StudioSession.FrameProblem {
                return StudioResponse.error(.unprocessableContent, e.error.description, which: "frame")
            } catch let e as GPUEncodeError {
                return StudioResponse.error(.unprocessableContent, e.description, which: "preset")
            }
        }
        router.post("/api/validate") { request, _ in
            let body: JSONValue
            switch await readJSON(request) { case .success(let v): body = v; case .failure(let refusal): return refusal.response }
            guard case .string(let text)? = body["preset"]?.kind else { return StudioResponse.error(.badRequest, "the body needs \"preset\": the preset's text") }
            return validation(Preset.check(json: text, origin: origin, allowed: options.allowed))
        }
        router.post("/api/save") { request, _ in
            let body: JSONValue
            switch await readJSON(request) { case .success(let v): body = v; case .failure(let refusal): return refusal.response }
            guard case .string(let text)? = body["preset"]?.kind, case .string(let name)? = body["name"]?.kind else {
                return StudioResponse.error(.badRequest, "the body needs \"preset\" (the text) and \"name\" (a .json file name)")
            }
            let destination: PresetSaver.Destination
            do { destination = try saver.destination(name) } catch let r as PresetSaver.Refusal { return StudioResponse.error(.forbidden, r.message) }
            let path = destination.path
            // Checked as the file it becomes, so its relative names resolve where it will live.
            let check = Preset.check(json: text, origin: path, allowed: options.allowed)
            if let first = check.errors.first {
                return StudioResponse.error(.unprocessableContent, first.unlocated,
                                            line: first.line > 0 ? first.line : nil, column: first.line > 0 ? first.column : nil, which: "preset")
            }
            do { try saver.write(text, to: destination) } catch let r as PresetSaver.Refusal {
                return StudioResponse.error(.forbidden, r.message)
            } catch let e as GPUEncodeError {
                return StudioResponse.error(.internalServerError, e.description)
            }
            return StudioResponse.json(.object([("saved", .string(path))]))
        }

        // Failures reach the user as the command's one error line; the server's own log stays quiet.
        let logger = Logger(label: "gpuencode-studio") { _ in SwiftLogNoOpLogHandler() }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? options.port
                port.set(bound)
                ready("http://127.0.0.1:\(bound)/?token=\(token)")
            },
            logger: logger
        )
        try await app.runService()
    }

    /// A preset problem and which text it is in ("preset" or "compare").
    struct Located: Error {
        let problem: StudioSession.PresetProblem
        let which: String
    }

    static func validation(_ check: PresetCheck) -> Response {
        guard let first = check.errors.first else { return StudioResponse.json(.object([("ok", .bool(true))])) }
        return StudioResponse.json(.object([
            ("ok", .bool(false)),
            ("error", .string(first.unlocated)),
            ("line", first.line > 0 ? .number(first.line) : .null),
            ("column", first.line > 0 ? .number(first.column) : .null),
        ]))
    }

    /// The request's body as JSON, or the response that refuses it (413 too large, 400 not JSON).
    static func readJSON(_ request: Request) async -> Result<JSONValue, ResponseRefusal> {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: maxBody) } catch is NIOTooManyBytesError {
            return .failure(ResponseRefusal(StudioResponse.error(.contentTooLarge, "the body is larger than \(maxBody) bytes")))
        } catch {
            return .failure(ResponseRefusal(StudioResponse.error(.badRequest, "the body could not be read")))
        }
        do {
            let value = try JSONParser.parse(bytes: Array(buffer.readableBytesView))
            guard case .object = value.kind else { return .failure(ResponseRefusal(StudioResponse.error(.badRequest, "the body must be a JSON object"))) }
            return .success(value)
        } catch let e as JSONSyntaxError {
            return .failure(ResponseRefusal(StudioResponse.error(.badRequest, "the body is not JSON: \(e.line):\(e.column): \(e.message)")))
        } catch {
            return .failure(ResponseRefusal(StudioResponse.error(.badRequest, "the body is not JSON")))
        }
    }

    struct ResponseRefusal: Error {
        let response: Response
        init(_ response: Response) { self.response = response }
    }

    /// The files a file parameter could name: those in the preset's folder (by name) and in the
    /// --allow-path folders (by full path) whose extension some filter reads, sorted. Symbolic links
    /// and sub-folders are left out.
    static func files(in home: String, allowed: AllowedPaths) -> [String] {
        var found: [String] = []
        for (index, dir) in ([home] + allowed.directories).enumerated() {
            guard let d = opendir(dir) else { continue }
            defer { closedir(d) }
            var names: [String] = []
            while let entry = readdir(d) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard !name.hasPrefix("."), FilterCatalog.fileExtensions.contains(pathExtension(name).lowercased()) else { continue }
                var st = stat()
                guard lstat("\(dir)/\(name)", &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                names.append(index == 0 ? name : "\(dir)/\(name)")
            }
            found += names.sorted()
        }
        return found
    }

    /// 32 random bytes as hex. Swift's system generator is the kernel's getrandom(2) on Linux:
    /// cryptographically secure, as a token guarding the user's files must be.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }
}
