import Foundation

/// A validated request to `/oauth2/logout` (OpenID Connect RP-Initiated Logout 1.0 section 2): the app
/// it comes from (`client_id` or the hint's `aud`), the ID token hint if it is one this broker
/// issued, and where the browser goes afterwards (a URI registered for the app, exactly) with `state`.
public struct EndSessionRequest: Sendable {
    public var app: App?
    public var hint: IDTokenClaims?
    public var postLogoutRedirectURI: String?
    public var state: String?

    /// Whether the person must confirm first (section 2: always, unless the hint names the session
    /// the browser is in). Without a session there is nothing to confirm.
    public func needsConfirmation(for session: BrowserSession?) -> Bool {
        guard let session else { return false }
        guard let hint, let sid = hint.sid else { return true }
        return !(SecretDigest.constantTimeEquals(sid, session.id) && hint.sub == session.accountID)
    }

    /// Where the browser goes once logged out: the registered URI with `state`; nil shows the
    /// broker's own signed-out page.
    public var redirect: String? {
        postLogoutRedirectURI.map { OAuthRedirect.url($0, parameters: [("state", state)]) }
    }

    /// The parameters again, for the confirmation form to post back.
    public var parameters: [String: String] {
        var parameters: [String: String] = [:]
        if let app { parameters["client_id"] = app.id }
        if let postLogoutRedirectURI { parameters["post_logout_redirect_uri"] = postLogoutRedirectURI }
        if let state { parameters["state"] = state }
        return parameters
    }

    /// Checks the request's parameters. Every refusal is shown on a page, never redirected: a URI that
    /// is not registered for the app must not receive the browser.
    public static func validate(_ parameters: [String: String], apps: any AppStore, keyring: SigningKeyring, issuer: String) async throws(BrokerError)
        -> EndSessionRequest
    {
        var request = EndSessionRequest()
        if let token = parameters["id_token_hint"], !token.isEmpty {
            guard let claims = await keyring.verifyIDTokenHint(token, issuer: issuer) else {
                throw BrokerError(.invalidRequest, .badRequest, "The id_token_hint is not an ID token this broker issued.")
            }
            request.hint = claims
        }
        let clientID = parameters["client_id"].flatMap { $0.isEmpty ? nil : $0 }
        if let clientID, let hint = request.hint, hint.aud != clientID {
            throw BrokerError(.invalidRequest, .badRequest, "The id_token_hint was issued to another client than client_id names.")
        }
        if let appID = clientID ?? request.hint?.aud {
            guard let app = try? await apps.app(id: appID) else {
                throw BrokerError(.invalidClient, .badRequest, "The application '\(appID)' is not known.")
            }
            request.app = app
        }
        if let uri = parameters["post_logout_redirect_uri"], !uri.isEmpty {
            guard let app = request.app else {
                throw BrokerError(.invalidRequest, .badRequest, "post_logout_redirect_uri needs client_id or id_token_hint to say which app it belongs to.")
            }
            // Exact string comparison, as for redirect_uri (RFC 9700 section 2.1).
            guard app.policy.logout.postLogoutRedirectURIs.contains(uri) else {
                throw BrokerError(.invalidRequest, .badRequest, "The post_logout_redirect_uri is not registered for this application.")
            }
            if RedirectURIRule.isUnsafeToRedirectTo(uri) {
                throw BrokerError(
                    .invalidRequest, .badRequest,
                    "The registered post_logout_redirect_uri is not allowed (\(RedirectURIRule.problem(uri) ?? "unsafe")); an administrator must change it."
                )
            }
            request.postLogoutRedirectURI = uri
        }
        if let state = parameters["state"] {
            guard state.utf8.count <= 2048 else { throw BrokerError(.invalidRequest, .badRequest, "state is too long.") }
            request.state = state
        }
        return request
    }
}
