import Foundation
import GatehousePluginKit
import GatehouseSupport

/// `providers[].config` of an `oidc` instance: the upstream OpenID provider, this broker's client
/// registration there, what to ask for, which ID tokens to accept, and how upstream claims become an
/// identity. See docs/plugins/oidc.md.
public struct OIDCConfig: Decodable, Sendable {
    /// The upstream's issuer: discovery reads `<issuer>/.well-known/openid-configuration`, and the
    /// document's `issuer` must equal this exactly.
    public var issuer: String
    public var clientID: String
    public var clientSecret: String?
    public var clientAuthentication: ClientAuthenticationMethod
    /// For `private_key_jwt` (or a client secret that is a signed JWT, as Sign in with Apple wants).
    public var privateKey: ClientAssertionKey?
    public var scopes: [String]
    /// The broker's callback as registered upstream; `<issuer>/oauth2/callback` of this broker by default.
    public var redirectURI: String?
    public var responseMode: ResponseMode
    public var prompt: String?
    public var acrValues: [String]
    /// More authorization request parameters (Google's `access_type: offline`, `hd`); the ones the
    /// plugin sets itself cannot be overridden.
    public var extraAuthParameters: [String: String]
    /// Whether to read the userinfo endpoint too; its `sub` must equal the ID token's.
    public var userinfo: Bool
    /// ID token algorithms accepted; `none` and HMAC are never accepted, whatever this says.
    public var signingAlgorithms: [String]
    /// Other audiences an ID token may list besides the client id (OIDC Core section 3.1.3.7 step 3).
    public var trustedAudiences: [String]
    public var clockSkew: Seconds
    /// Take `email` as verified even when the upstream does not say so (Dex's option; some providers
    /// never send `email_verified`). Such addresses never link accounts.
    public var insecureSkipEmailVerified: Bool
    /// Trust this upstream's `email_verified` to link a first sign-in to an existing account with the
    /// same address, where the app's policy (`linkAccountsByVerifiedEmail`) allows it.
    public var trustEmail: Bool
    /// Only people whose verified address is in one of these domains may sign in.
    public var allowedDomains: [String]
    /// Only people whose claims have these values may sign in (claim → accepted values).
    public var requiredClaims: [String: [String]]
    /// Only members of one of these groups (as the upstream names them) may sign in.
    public var allowedGroups: [String]
    /// Groups kept: those matching this regular expression (all when not set).
    public var groupsFilter: String?
    /// Put in front of every group name kept (`corp:`), so groups of two upstreams never mix.
    public var groupsPrefix: String
    public var claimMapping: ClaimMapping
    /// Upstream claims kept with the identity besides the standard ones.
    public var extraClaims: [String]
    /// How often, at most, an app's refresh asks the upstream (with its refresh token) whether the
    /// person is still there; 0 checks on every refresh.
    public var recheckInterval: Seconds
    /// How long one request to the upstream may take.
    public var timeout: Seconds
    /// How long discovery and keys are cached (both are fetched again at once when they fail).
    public var metadataMaxAge: Seconds

    /// How the broker authenticates at the upstream's token endpoint.
    public enum ClientAuthenticationMethod: String, Decodable, Sendable, CaseIterable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"
    }

    /// How the upstream sends the browser back: a query string, or a form post (needed by Sign in with
    /// Apple when names or email are asked for).
    public enum ResponseMode: String, Decodable, Sendable, CaseIterable {
        case query
        case formPost = "form_post"
    }

    /// Which upstream claim becomes which part of the identity.
    public struct ClaimMapping: Decodable, Sendable {
        public var subject: String
        public var username: String
        public var email: String
        public var emailVerified: String
        public var name: String
        public var groups: String

        public init() {
            subject = "sub"
            username = "preferred_username"
            email = "email"
            emailVerified = "email_verified"
            name = "name"
            groups = "groups"
        }

        enum CodingKeys: String, CodingKey { case subject, username, email, emailVerified, name, groups }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = ClaimMapping()
            subject = try container.decodeIfPresent(String.self, forKey: .subject) ?? defaults.subject
            username = try container.decodeIfPresent(String.self, forKey: .username) ?? defaults.username
            email = try container.decodeIfPresent(String.self, forKey: .email) ?? defaults.email
            emailVerified = try container.decodeIfPresent(String.self, forKey: .emailVerified) ?? defaults.emailVerified
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? defaults.name
            groups = try container.decodeIfPresent(String.self, forKey: .groups) ?? defaults.groups
            for (key, value) in [
                (CodingKeys.subject, subject), (.username, username), (.email, email), (.emailVerified, emailVerified), (.name, name), (.groups, groups),
            ]
            where value.isEmpty {
                throw ConfigIssue(path: decoder.codingPath + [key], "must name a claim")
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case issuer, clientID, clientSecret, clientAuthentication, privateKey, scopes, redirectURI, responseMode, prompt, acrValues
        case extraAuthParameters, userinfo, signingAlgorithms, trustedAudiences, clockSkew, insecureSkipEmailVerified, trustEmail
        case allowedDomains, requiredClaims, allowedGroups, groupsFilter, groupsPrefix, claimMapping, extraClaims, recheckInterval
        case timeout, metadataMaxAge
    }

    /// The ID token algorithms the plugin can check: asymmetric ones only.
    public static let supportedAlgorithms = ["RS256", "PS256", "ES256", "EdDSA"]
    /// Authorization request parameters the plugin sets itself.
    static let reservedParameters: Set = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "response_mode",
        "prompt", "acr_values", "login_hint", "request", "request_uri",
    ]
    static let prompts: Set = ["none", "login", "consent", "select_account"]

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let path = decoder.codingPath
        func optional<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? fallback }
        issuer = try container.decode(String.self, forKey: .issuer)
        clientID = try container.decode(String.self, forKey: .clientID)
        clientSecret = try container.decodeIfPresent(String.self, forKey: .clientSecret)
        privateKey = try container.decodeIfPresent(ClientAssertionKey.self, forKey: .privateKey)
        clientAuthentication = try optional(.clientAuthentication, privateKey == nil ? .clientSecretBasic : .privateKeyJWT)
        scopes = try optional(.scopes, ["openid", "profile", "email"])
        redirectURI = try container.decodeIfPresent(String.self, forKey: .redirectURI)
        responseMode = try optional(.responseMode, .query)
        prompt = try container.decodeIfPresent(String.self, forKey: .prompt)
        acrValues = try optional(.acrValues, [])
        extraAuthParameters = try optional(.extraAuthParameters, [:])
        userinfo = try optional(.userinfo, false)
        signingAlgorithms = try optional(.signingAlgorithms, Self.supportedAlgorithms)
        trustedAudiences = try optional(.trustedAudiences, [])
        clockSkew = try optional(.clockSkew, Seconds(60))
        insecureSkipEmailVerified = try optional(.insecureSkipEmailVerified, false)
        trustEmail = try optional(.trustEmail, false)
        allowedDomains = try optional(.allowedDomains, [String]()).map { $0.lowercased() }
        requiredClaims = try optional(.requiredClaims, [:])
        allowedGroups = try optional(.allowedGroups, [])
        groupsFilter = try container.decodeIfPresent(String.self, forKey: .groupsFilter)
        groupsPrefix = try optional(.groupsPrefix, "")
        claimMapping = try optional(.claimMapping, ClaimMapping())
        extraClaims = try optional(.extraClaims, [])
        recheckInterval = try optional(.recheckInterval, .minutes(5))
        timeout = try optional(.timeout, Seconds(10))
        metadataMaxAge = try optional(.metadataMaxAge, .hours(1))

        if !Self.isUsableURL(issuer) {
            throw ConfigIssue(path: path + [CodingKeys.issuer], "must be an https URL (http only on this machine's loopback), got '\(issuer)'")
        }
        if clientID.isEmpty { throw ConfigIssue(path: path + [CodingKeys.clientID], "must not be empty") }
        switch clientAuthentication {
        case .clientSecretBasic, .clientSecretPost:
            if clientSecret?.isEmpty ?? true, privateKey?.sendAs != .clientSecret {
                throw ConfigIssue(
                    path: path + [CodingKeys.clientSecret], "is required with \(clientAuthentication.rawValue) (or give a privateKey with sendAs: client_secret)")
            }
        case .privateKeyJWT:
            if privateKey == nil { throw ConfigIssue(path: path + [CodingKeys.privateKey], "is required with private_key_jwt") }
        }
        if !scopes.contains("openid") { throw ConfigIssue(path: path + [CodingKeys.scopes], "must contain openid") }
        if let redirectURI, !Self.isUsableURL(redirectURI) {
            throw ConfigIssue(path: path + [CodingKeys.redirectURI], "must be an https URL (http only on loopback), got '\(redirectURI)'")
        }
        if let prompt, !prompt.split(separator: " ").allSatisfy({ Self.prompts.contains(String($0)) }) {
            throw ConfigIssue(path: path + [CodingKeys.prompt], "must be none, login, consent or select_account (or several, space-separated)")
        }
        if let reserved = extraAuthParameters.keys.sorted().first(where: Self.reservedParameters.contains) {
            throw ConfigIssue(path: path + [CodingKeys.extraAuthParameters, ConfigIssue.Key(reserved)], "is set by the plugin itself")
        }
        if signingAlgorithms.isEmpty { throw ConfigIssue(path: path + [CodingKeys.signingAlgorithms], "must name at least one algorithm") }
        for (index, algorithm) in signingAlgorithms.enumerated() where !Self.supportedAlgorithms.contains(algorithm) {
            throw ConfigIssue(
                path: path + [CodingKeys.signingAlgorithms, ConfigIssue.Key(index: index)],
                "'\(algorithm)' is not accepted (use \(Self.supportedAlgorithms.joined(separator: ", ")); none and HMAC never are)"
            )
        }
        if !(0...300).contains(clockSkew.value) { throw ConfigIssue(path: path + [CodingKeys.clockSkew], "must be between 0 and 300 seconds") }
        if !(0...86_400).contains(recheckInterval.value) { throw ConfigIssue(path: path + [CodingKeys.recheckInterval], "must be between 0 and 86400 seconds") }
        if !(1...60).contains(timeout.value) { throw ConfigIssue(path: path + [CodingKeys.timeout], "must be between 1 and 60 seconds") }
        if !(60...604_800).contains(metadataMaxAge.value) { throw ConfigIssue(path: path + [CodingKeys.metadataMaxAge], "must be between 60 and 604800 seconds") }
        if let groupsFilter, (try? Regex(groupsFilter)) == nil {
            throw ConfigIssue(path: path + [CodingKeys.groupsFilter], "not a valid regular expression")
        }
        if trustEmail, insecureSkipEmailVerified {
            throw ConfigIssue(
                path: path + [CodingKeys.trustEmail], "cannot be combined with insecureSkipEmailVerified: an address nobody verified must not link accounts")
        }
    }

    /// `https`, or `http` on a loopback host (a test upstream on this machine), without a fragment.
    static func isUsableURL(_ text: String) -> Bool {
        LoopbackHost.allowsWebURL(text) && URL(string: text)?.fragment == nil
    }
}
