import Foundation
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the service is doing, for a unit of `Type=notify` (sd_notify's protocol: one
/// datagram of `KEY=value` lines to the socket in `$NOTIFY_SOCKET`). Without that variable (not run
/// by systemd, or by a unit of another type) it does nothing.
enum SystemdNotification {
    /// Sends `state` (e.g. `READY=1\nSTATUS=serving`); failures are ignored, as sd_notify's are:
    /// systemd's own timeout reports a service that never said it was ready.
    static func send(_ state: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        #if os(Linux)
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        var bytes = Array(path.utf8)
        // "@name" is a socket in the abstract namespace: its address starts with a zero byte.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        var address = sockaddr_un()
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, message, message.count, Int32(MSG_NOSIGNAL), $0, length) }
        }
        #endif
    }
}

/// Says `STOPPING=1` to systemd as soon as a graceful shutdown begins, so `systemctl status` shows
/// the broker finishing its requests rather than a service that stopped answering.
struct SystemdStoppingNotice: Service, CustomStringConvertible {
    var description: String { "SystemdStoppingNotice" }

    func run() async throws {
        try? await gracefulShutdown()
        SystemdNotification.send("STOPPING=1\nSTATUS=shutting down: finishing the requests in flight")
    }
}
