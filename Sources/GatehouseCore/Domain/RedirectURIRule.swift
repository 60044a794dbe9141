import Foundation

/// The rule for an app's registered redirect URIs: they are matched exactly (RFC 9700 section 2.1),
/// so each must be absolute, without fragment or wildcard.
public enum RedirectURIRule {
    public static func check(_ uris: [String], path: [any CodingKey]) throws {
        for (index, uri) in uris.enumerated() {
            guard let url = URL(string: uri), url.scheme != nil, url.fragment == nil, !uri.contains("*") else {
                throw ConfigIssue(path: path + [ConfigPath.Key(index: index)], "not an absolute URI without fragment or wildcard: '\(uri)'")
            }
        }
    }
}
