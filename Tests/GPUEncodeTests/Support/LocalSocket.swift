import Glibc

/// A TCP socket listening on 127.0.0.1 at a port the system picked: for tests that check a
/// connection never happens (nothing fetched) or that a port is taken. Close `fd` when done.
struct LocalListener {
    let fd: Int32
    let port: UInt16

    init?(backlog: Int32 = 4) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, backlog) == 0 else { close(fd); return nil }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }
}
