import Foundation

/// A validated request to `/oauth2/authorize`: what the app asked for, kept with the browser flow until
/// the person has signed in and an authorization code goes back to `redirectURI`.
public struct AuthorizationRequest: Sendable, Hashable, Codable {
    public var clientID: String
    public var redirectURI: String
    public var scopes: [String]
    public var state: String?
    public var nonce: String?
    public var codeChallenge: String
    public var prompt: [String]
    public var loginHint: String?
    /// `max_age` in seconds: a sign-in older than this is not good enough (OIDC Core section 3.1.2.1).
    public var maxAge: Int?
    /// `acr_values`, space-separated in the request (`AuthenticationLevel`).
    public var acrValues: [String]
    /// For the verification page of the device grant (RFC 8628): the device authorization this
    /// sign-in approves (by its device code's digest). It ends in an approval instead of a code.
    public var device: DeviceVerification?
    /// `ui_locales` as the request (pushed or signed ones included) gave it: the person's languages,
    /// for the pages (OIDC Core section 3.1.2.1). Not stored with the flow, which keeps the language chosen.
    public var uiLocales: String?

    public init(
        clientID: String, redirectURI: String, scopes: [String], state: String?, nonce: String?, codeChallenge: String, prompt: [String] = [], loginHint: String? = nil,
        maxAge: Int? = nil, acrValues: [String] = []
    ) {
        self.maxAge = maxAge
        self.acrValues = acrValues
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.prompt = prompt
        self.loginHint = loginHint
    }
}

extension AuthorizationRequest {
    enum CodingKeys: String, CodingKey { case clientID, redirectURI, scopes, state, nonce, codeChallenge, prompt, loginHint, maxAge, acrValues, device }

    /// Browser flows stored before `maxAge` and `acrValues` existed still read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            clientID: try container.decode(String.self, forKey: .clientID), redirectURI: try container.decode(String.self, forKey: .redirectURI),
            scopes: try container.decode([String].self, forKey: .scopes), state: try container.decodeIfPresent(String.self, forKey: .state),
            nonce: try container.decodeIfPresent(String.self, forKey: .nonce), codeChallenge: try container.decode(String.self, forKey: .codeChallenge),
            prompt: try container.decodeIfPresent([String].self, forKey: .prompt) ?? [], loginHint: try container.decodeIfPresent(String.self, forKey: .loginHint),
            maxAge: try container.decodeIfPresent(Int.self, forKey: .maxAge), acrValues: try container.decodeIfPresent([String].self, forKey: .acrValues) ?? []
        )
        self.device = try container.decodeIfPresent(DeviceVerification.self, forKey: .device)
    }
}

/// A refused authorization request. Before the client and redirect URI are known to be good, the
/// refusal is shown on an error page (redirecting would make the broker an open redirector); after,
/// it goes back to the app as an OAuth error redirect.
public enum AuthorizationRefusal: Error, Sendable {
    case page(BrokerError)
    case redirect(BrokerError, to: String)
}

/// The browser a browser flow is bound to: a random value kept in a cookie (only its digest is stored
/// with the flow) and a CSRF token that every form of the flow carries.
public struct BrowserBinding: Sendable, Hashable, Codable {
    public var cookieDigest: String
    public var csrfToken: String

    public init(cookieDigest: String, csrfToken: String) {
        self.cookieDigest = cookieDigest
        self.csrfToken = csrfToken
    }

    /// A binding to the browser holding `cookie` (its digest is kept), with a fresh CSRF token.
    public init(cookie: String) {
        self.init(cookieDigest: SecretDigest.sha256Hex(cookie), csrfToken: RandomToken.make())
    }

    /// Whether a form post came from the browser the flow was started in.
    public func accepts(_ proof: BrowserProof) -> Bool {
        guard let cookie = proof.cookie else { return false }
        let cookieMatches = SecretDigest.matches(cookie, digest: cookieDigest)
        let csrfMatches = SecretDigest.constantTimeEquals(proof.csrfToken, csrfToken)
        return cookieMatches && csrfMatches
    }
}

/// What a browser presents with a form post: its binding cookie and the form's CSRF token.
public struct BrowserProof: Sendable, Hashable {
    public var cookie: String?
    public var csrfToken: String

    public init(cookie: String?, csrfToken: String) {
        self.cookie = cookie
        self.csrfToken = csrfToken
    }
}

/// A browser flow's OAuth side: the validated request and the browser binding.
public struct BrowserAuthorization: Sendable, Hashable, Codable {
    public var request: AuthorizationRequest
    public var binding: BrowserBinding
    /// The single sign-on session the browser was in when the flow started, if any.
    public var sessionID: String?
    /// True when the flow goes on from that session instead of a new sign-in (a step-up, a consent):
    /// it ends in the same session, with the same `auth_time`.
    public var continuesSession: Bool?
    /// The browser's `User-Agent` (cut short), for the person's session list.
    public var userAgent: String?

    public init(request: AuthorizationRequest, binding: BrowserBinding) {
        self.request = request
        self.binding = binding
    }
}

/// Builds redirect URIs for OAuth answers: the registered URI with `code`/`error`, `state` and `iss`
/// (RFC 9207) added to its query.
public enum OAuthRedirect {
    public static func url(_ redirectURI: String, parameters: [(String, String?)]) -> String {
        guard var components = URLComponents(string: redirectURI) else { return redirectURI }
        var items = components.queryItems ?? []
        for (name, value) in parameters {
            if let value { items.append(URLQueryItem(name: name, value: value)) }
        }
        components.queryItems = items
        // URLComponents leaves "+" alone in queries, which form decoders read as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        return components.string ?? redirectURI
    }
}
