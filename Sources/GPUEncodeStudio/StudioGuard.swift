import HTTPTypes
import Hummingbird
import Synchronization

/// What every request must show before any handler runs (the page included): the session's token,
/// a Host naming this server by loopback address (so a page on another site that rebinds its DNS
/// name to 127.0.0.1 is refused), and, when the browser sends one, an Origin of this server (so
/// another site's script cannot post to it). Unknown paths are refused the same way before they
/// are found unknown, so nothing about the server shows without the token.
struct StudioGuard<Context: RequestContext>: RouterMiddleware {
    let token: String
    /// The port the server listens on, known once it is bound (it may be chosen by the system).
    let port: BoundPort

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let port = port.value else { return StudioResponse.error(.serviceUnavailable, "the server is starting") }
        let here = ["127.0.0.1:\(port)", "localhost:\(port)"]
        guard let host = request.head.authority, here.contains(host.lowercased()) else {
            return StudioResponse.error(.forbidden, "wrong Host: the studio answers to 127.0.0.1:\(port) only")
        }
        if let origin = request.headers[.origin], !here.map({ "http://" + $0 }).contains(origin.lowercased()) {
            return StudioResponse.error(.forbidden, "requests from another origin are refused")
        }
        let given = request.headers[StudioResponse.tokenHeader] ?? request.uri.queryParameters.get("token")
        guard let given, StudioGuard.same(given, token) else {
            return StudioResponse.error(.forbidden, "missing or wrong token: open the URL gpuencode studio printed")
        }
        return try await next(request, context)
    }

    /// Compares in time that does not depend on where the strings differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var diff: UInt8 = 0
        for i in x.indices { diff |= x[i] ^ y[i] }
        return diff == 0
    }
}

/// The bound port, written once when the server is up and read by every request.
final class BoundPort: Sendable {
    private let stored = Mutex<Int?>(nil)
    var value: Int? { stored.withLock { $0 } }
    func set(_ port: Int) { stored.withLock { $0 = port } }
}
