import Foundation

/// What an app's policy says about browser single sign-on: how long a session may sit unused and
/// how long it may last at all before the app asks the person to sign in again, and whether the app
/// must ask the person's consent before it gets their data.
public struct SessionPolicy: Sendable, Hashable, Codable {
    /// A session not used for this long no longer signs anyone in to the app.
    public var idleLifetime: Seconds
    /// A sign-in older than this no longer signs anyone in to the app; a session created at this
    /// app ends after it.
    public var absoluteLifetime: Seconds

    /// Session lifetimes.
    public init(idleLifetime: Seconds = .minutes(30), absoluteLifetime: Seconds = .hours(10)) {
        self.idleLifetime = idleLifetime
        self.absoluteLifetime = absoluteLifetime
    }

    enum CodingKeys: String, CodingKey { case idleLifetime, absoluteLifetime }

    /// Reads session lifetimes with defaults, refusing impossible values with their path.
    public init(from decoder: any Decoder) throws {
        let defaults = SessionPolicy()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        idleLifetime = try container.decodeIfPresent(Seconds.self, forKey: .idleLifetime) ?? defaults.idleLifetime
        absoluteLifetime = try container.decodeIfPresent(Seconds.self, forKey: .absoluteLifetime) ?? defaults.absoluteLifetime
        let path = decoder.codingPath
        guard (60...(30 * 86_400)).contains(idleLifetime.value) else {
            throw ConfigIssue(path: path + [CodingKeys.idleLifetime], "must be between 60 seconds and 30 days, got \(idleLifetime.value) seconds")
        }
        guard (60...(90 * 86_400)).contains(absoluteLifetime.value) else {
            throw ConfigIssue(path: path + [CodingKeys.absoluteLifetime], "must be between 60 seconds and 90 days, got \(absoluteLifetime.value) seconds")
        }
        guard idleLifetime.value <= absoluteLifetime.value else {
            throw ConfigIssue(path: path + [CodingKeys.idleLifetime], "must not be longer than absoluteLifetime (\(absoluteLifetime.value) seconds)")
        }
    }
}

/// Where an app's logout notices go (OpenID Connect RP-Initiated and Back-Channel Logout 1.0).
public struct LogoutPolicy: Sendable, Hashable, Codable {
    /// Where the browser may be sent after logging out at `/oauth2/logout`, compared exactly.
    public var postLogoutRedirectURIs: [String]
    /// Where the broker POSTs a logout token when a session the app got tokens in ends; nil: none.
    public var backchannelLogoutURI: String?

    /// Logout settings.
    public init(postLogoutRedirectURIs: [String] = [], backchannelLogoutURI: String? = nil) {
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.backchannelLogoutURI = backchannelLogoutURI
    }

    enum CodingKeys: String, CodingKey { case postLogoutRedirectURIs, backchannelLogoutURI }

    /// Reads logout settings, refusing URIs the redirect rule refuses.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        postLogoutRedirectURIs = try container.decodeIfPresent([String].self, forKey: .postLogoutRedirectURIs) ?? []
        backchannelLogoutURI = try container.decodeIfPresent(String.self, forKey: .backchannelLogoutURI)
        let path = decoder.codingPath
        for (position, uri) in postLogoutRedirectURIs.enumerated() {
            guard let url = URLComponents(string: uri), let scheme = url.scheme, !scheme.isEmpty, url.fragment == nil else {
                throw ConfigIssue(path: path + [CodingKeys.postLogoutRedirectURIs, ConfigIssue.Key(index: position)], "must be an absolute URI without a fragment")
            }
        }
        if let uri = backchannelLogoutURI {
            // Section 2.2: https, or http on this machine (development); never a fragment.
            guard LoopbackHost.allowsWebURL(uri), URLComponents(string: uri)?.fragment == nil else {
                throw ConfigIssue(path: path + [CodingKeys.backchannelLogoutURI], "must be an https URL (http only on a loopback host) without a fragment")
            }
        }
    }
}
