import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Whether a directory's port accepts a TCP connection: tells a failed TLS handshake from a host
/// that cannot be reached, when libldap's message does not say which.
enum TCPProbe {
    /// Connects to the URL's host and port (or `defaultPort`) and closes again at once.
    static func accepts(_ url: String, defaultPort: Int, timeout: Int) -> Bool {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return false }
        let port = components.port ?? defaultPort
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), String(port), &hints, &found) == 0, let found else { return false }
        defer { freeaddrinfo(found) }
        // The first address only, within at most 3 s: this only labels a failure that already happened.
        return connects(found.pointee, timeout: min(timeout, 3))
    }

    private static func connects(_ address: addrinfo, timeout: Int) -> Bool {
        let socket = Glibc.socket(address.ai_family, address.ai_socktype, address.ai_protocol)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL, 0) | O_NONBLOCK)
        if connect(socket, address.ai_addr, address.ai_addrlen) == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var waiting = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        guard poll(&waiting, 1, Int32(timeout * 1000)) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
    }
}
