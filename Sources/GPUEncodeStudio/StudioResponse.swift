import GPUEncodeKit
import HTTPTypes
import Hummingbird
import NIOCore

/// The studio's responses: JSON documents (errors included, one line each) and raw pictures.
enum StudioResponse {
    static let tokenHeader = HTTPField.Name("X-Studio-Token")!

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: JSONWriter.write(value))))
    }

    /// `{"error": message}`, with the line and column of a preset text at fault.
    static func error(_ status: HTTPResponse.Status, _ message: String, line: Int? = nil, column: Int? = nil, which: String? = nil) -> Response {
        var members: [(String, JSONValue)] = [("error", .string(message))]
        if line != nil || which != nil {
            members += [("line", line.map { .number($0) } ?? .null), ("column", column.map { .number($0) } ?? .null)]
        }
        if let which { members.append(("which", .string(which))) }
        return json(.object(members), status: status)
    }

    static func html(_ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        // The page is ours alone: no framing by other sites, no resources from elsewhere.
        headers[.contentSecurityPolicy] = "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data: blob:; frame-ancestors 'none'"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Two pictures of one frame, A then B, as RGBA8 rows, top first; their sizes and the frame's time in headers.
    static func pictures(_ p: StudioSession.Pictures, milliseconds: Int) -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(p.a.pixels.count + p.b.pixels.count)
        buffer.writeBytes(p.a.pixels)
        buffer.writeBytes(p.b.pixels)
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.cacheControl] = "no-store"
        let fields: [(String, String)] = [
            ("X-Width", "\(p.a.width)"), ("X-Height", "\(p.a.height)"),
            ("X-Width-B", "\(p.b.width)"), ("X-Height-B", "\(p.b.height)"),
            ("X-Frame-Time", p.time.map { formatNumber($0) } ?? "0"),
            ("X-Render-Ms", "\(milliseconds)"),
        ]
        for (name, value) in fields { headers[HTTPField.Name(name)!] = value }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: buffer))
    }
}
