import Foundation
import GatehousePluginKit

/// Whether a host name or address is this machine's loopback (`localhost`, `127.0.0.0/8`, `::1`),
/// for the rules that let plain-text connections stay on the machine: an `http://` issuer, a plain
/// `ldap://` directory, an SMTP relay without TLS.
public enum LoopbackHost {
    /// Whether `host` is a loopback name or address (`localhost`, `127.0.0.1`, `::1`).
    public static func contains(_ host: String) -> Bool {
        let bare = host.lowercased().trimmingCharacters(in: ["[", "]"])
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        let ipv4 = octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
        return ipv4 || bare == "::1" || bare == "localhost"
    }

    /// Whether `text` is an absolute `https` URL, or `http` on this machine (development and tests):
    /// the rule for addresses the broker sends browsers to or calls itself. Never `javascript:`.
    public static func allowsWebURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return false }
        return scheme == "https" || (scheme == "http" && contains(host))
    }
}
