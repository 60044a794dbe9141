import Foundation

/// What an app may do at the token endpoint with token exchange (RFC 8693): for which audiences it
/// may get tokens, and whose tokens it may present as the subject (or actor) of an exchange. Off
/// (no audience) by default.
public struct TokenExchangePolicy: Sendable, Hashable, Codable {
    /// The audiences the app may ask tokens for: app ids (`audience`) or absolute URIs (`resource`,
    /// RFC 8707). Empty: the app may not exchange tokens.
    public var audiences: [String]
    /// The apps whose tokens (access or ID tokens) the app may present, besides its own; `*` for any.
    public var subjectTokensOf: [String]

    /// A token-exchange policy; every parameter has its documented default.
    public init(audiences: [String] = [], subjectTokensOf: [String] = []) {
        self.audiences = audiences
        self.subjectTokensOf = subjectTokensOf
    }

    /// Whether the app (`appID`) may present a token issued to `clientID`.
    public func accepts(tokensOf clientID: String, asApp appID: String) -> Bool {
        clientID == appID || subjectTokensOf.contains(clientID) || subjectTokensOf.contains("*")
    }

    enum CodingKeys: String, CodingKey { case audiences, subjectTokensOf }

    /// Reads the policy, refusing audiences that are neither an app-id-like name nor an absolute URI
    /// without a fragment, with their path.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        audiences = try container.decodeIfPresent([String].self, forKey: .audiences) ?? []
        subjectTokensOf = try container.decodeIfPresent([String].self, forKey: .subjectTokensOf) ?? []
        for (index, audience) in audiences.enumerated() where !Self.isAudience(audience) {
            throw ConfigIssue(
                path: decoder.codingPath + [CodingKeys.audiences, ConfigIssue.Key(index: index)],
                "'\(audience)' is neither an app id nor an absolute URI without a fragment"
            )
        }
    }

    /// An app id (letters, digits, `-`, `_`, `.`) or an absolute URI without a fragment (RFC 8707
    /// section 2).
    public static func isAudience(_ text: String) -> Bool {
        guard !text.isEmpty, text.count <= 2048 else { return false }
        if text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) { return true }
        guard let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty, url.fragment == nil, !text.contains("#") else { return false }
        return url.host != nil || scheme == "urn"
    }
}
