import Foundation

/// The rule for an app's registered redirect and post-logout redirect URIs. They are matched exactly
/// (RFC 9700 section 2.1), so each must be absolute, without fragment or wildcard; and a browser must
/// come back to the app through them, so only `https`, `http` on a loopback address (RFC 8252
/// section 7.3) and private-use schemes named after a reverse domain (RFC 8252 section 7.1,
/// `com.example.app:/callback`) are allowed. Schemes a browser runs or shows itself (`javascript:`,
/// `data:`, ...) are refused by name.
public enum RedirectURIRule {
    /// Schemes that run script, show content or read local files instead of reaching an app.
    static let refusedSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob", "about", "filesystem", "view-source"]

    /// Why `uri` may not be registered, or nil when it may.
    public static func problem(_ uri: String) -> String? {
        if uri.contains("*") { return "no wildcards: redirect URIs are compared exactly" }
        if uri.contains("#") { return "must not have a fragment (RFC 6749 section 3.1.2)" }
        if uri.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == " " }) { return "no spaces or control characters" }
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(), !scheme.isEmpty else {
            return "not an absolute URI"
        }
        if refusedSchemes.contains(scheme) { return "the '\(scheme):' scheme is refused: a browser would run or show it instead of returning to the app" }
        switch scheme {
        case "https":
            return (components.host ?? "").isEmpty ? "an https URI needs a host" : nil
        case "http":
            return LoopbackHost.contains(components.host ?? "") ? nil : "http only on a loopback address (RFC 8252 section 7.3); use https"
        default:
            // A private-use scheme is a reverse domain name the app owns: at least one dot.
            return scheme.split(separator: ".", omittingEmptySubsequences: false).count >= 2 && !scheme.hasSuffix(".")
                ? nil : "a private-use scheme must be a reverse domain name, e.g. com.example.app:/callback (RFC 8252 section 7.1)"
        }
    }

    /// Whether a browser must never be sent to `uri`, whatever was stored: a scheme a browser runs or
    /// shows itself, or no absolute URI at all. (The full rule applies when URIs are registered; apps
    /// stored before it keep other legacy URIs working.)
    public static func isUnsafeToRedirectTo(_ uri: String) -> Bool {
        guard let scheme = URLComponents(string: uri)?.scheme?.lowercased(), !scheme.isEmpty else { return true }
        return refusedSchemes.contains(scheme) || uri.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Every URI's problem, each at its exact path (`<path>[i]`).
    public static func issues(_ uris: [String], path: String) -> [ConfigIssue] {
        uris.enumerated().compactMap { index, uri in problem(uri).map { ConfigIssue(path: "\(path)[\(index)]", "\($0): '\(uri)'") } }
    }

    /// Throws the first URI's problem, at its exact path.
    public static func check(_ uris: [String], path: [any CodingKey]) throws {
        for (index, uri) in uris.enumerated() {
            if let problem = problem(uri) { throw ConfigIssue(path: path + [ConfigIssue.Key(index: index)], "\(problem): '\(uri)'") }
        }
    }
}
