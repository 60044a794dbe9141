import Crypto
import Foundation

/// The one question a mobile app asks when it starts (ClueRide's registration-state service): may I
/// go on, and what must I do first? Answered from the app's installation id and the access token it
/// holds, if any; and `POST /v1/logout`, which ends an installation's registration at once.
public struct RegistrationState: Sendable {
    /// What the app must do.
    public enum State: String, Sendable, Hashable, Codable {
        /// Go on; renew after `renewAfter`.
        case active
        /// The access token has expired or is about to: renew it with the refresh token.
        case renewalRequired = "renewal_required"
        /// No valid registration for this installation: register (or sign in) again.
        case registrationRequired = "registration_required"
        /// Signed in, but the new account's profile is not confirmed yet.
        case confirmationRequired = "confirmation_required"
    }

    let oauth: OAuthService
    let plugins: PluginInstances
    let clock: any BrokerClock
    var store: any BrokerStore { oauth.store }

    public init(oauth: OAuthService, plugins: PluginInstances, clock: any BrokerClock) {
        self.oauth = oauth
        self.plugins = plugins
        self.clock = clock
    }

    /// How tokens name the installation they were issued to: a digest, so that the token (which
    /// resource servers see) does not hand out the installation id the app keeps.
    public static func installationDigest(appID: String, installationID: String) -> String {
        Base64URL.encode(Data(SHA256.hash(data: Data("gatehouse-installation\u{0}\(appID)\u{0}\(installationID)".utf8))))
    }

    /// The state of one installation of an app. A token that was issued to another installation (the
    /// app was wiped and reinstalled, and the old token survived in a backup or the keychain), to
    /// another app, or that was revoked (logout, a removed device) answers `registration_required`.
    public func state(appID: String, installationID: String, accessToken: PresentedToken?) async throws -> JSONValue {
        guard let app = try await store.app(id: appID), !app.disabled else {
            throw BrokerError(.invalidClient, .unauthenticated, "Unknown app '\(appID)'.")
        }
        try Self.checkInstallationID(installationID)
        func required(_ reason: String) -> JSONValue {
            ["state": .string(State.registrationRequired.rawValue), "reason": .string(reason)]
        }
        // A sign-in from this installation that waits for its profile to be confirmed (looked up only
        // for apps that ask for confirmation).
        let pending =
            app.policy.confirmProfile
            ? try await store.pluginRecord(
                namespace: Self.namespace, key: Self.pendingKey(Self.installationDigest(appID: app.id, installationID: installationID)), now: clock.now
            ) : nil
        if let pending, let account = try await store.account(id: String(decoding: pending.value, as: UTF8.self)), account.profilePending {
            return ["state": .string(State.confirmationRequired.rawValue)]
        }
        guard let accessToken else { return required("no_token") }
        let claims: AccessTokenClaims
        do {
            // An expired token still tells whose it was, as long as its refresh token may live.
            claims = try await oauth.authorize(accessToken, expiredGrace: app.policy.refreshTokenLifetime.timeInterval)
        } catch let error as BrokerError where error.code == .invalidToken {
            // Deleting an account revokes its tokens; a token the broker signed for this app whose
            // account is gone says so, rather than looking like any invalid token.
            if let signed = try? await oauth.keyring.verify(accessToken.token, expiredGrace: app.policy.refreshTokenLifetime.timeInterval),
                !signed.stateless, signed.clientID == app.id, try await !oauth.revocations.isSignedByRevokedKey(accessToken.token),
                try await store.account(id: signed.sub.value) == nil
            {
                return required("account_deleted")
            }
            return required("token_not_valid")
        }
        guard claims.clientID == app.id else { return required("token_of_another_app") }
        guard try await issuedTo(claims, appID: app.id, installationID: installationID) else { return required("token_of_another_installation") }
        let now = clock.now
        if claims.exp.value <= now {
            // An expired token is renewable only while its refresh-token family lives (not logged
            // out, revoked or run out); the revocation list forgets families after a while, the
            // store does not.
            guard let family = claims.fid, try await store.isRefreshTokenFamilyLive(familyID: family, now: now) else { return required("session_ended") }
        }

        var answer: [String: JSONValue] = ["registrationType": .string(registrationType(of: claims))]
        if !claims.stateless {
            guard let account = try await store.account(id: claims.sub.value) else { return required("account_deleted") }
            let links = try await store.identityLinks(accountID: account.id)
            var profile = account.profile ?? AccountProfile(claims: (links.first { $0.providerID == claims.idp } ?? links.first)?.claims ?? IdentityClaims())
            if profile.email == nil, let address = app.policy.verifiedEmails(in: links).first {
                // A device key vouches for no address; the account's verified one stands in.
                profile.email = address
                profile.emailVerified = true
            }
            // What the token's scopes grant, as at userinfo: names with `profile`, the address with `email`.
            let scopes = Set(claims.scope.split(separator: " ").map(String.init))
            if !scopes.contains("profile") {
                profile.name = nil
                profile.picture = nil
            }
            if !scopes.contains("email") {
                profile.email = nil
                profile.emailVerified = false
            }
            // A username may be an address: shown with the `profile` scope only, as at userinfo.
            var summary: [String: JSONValue] = ["id": .string(account.id)]
            if scopes.contains("profile") { summary["username"] = .string(account.username) }
            answer["account"] = .object(summary)
            answer["profile"] = profile.json
            if account.profilePending, app.policy.confirmProfile {
                answer["state"] = .string(State.confirmationRequired.rawValue)
                return .object(answer)
            }
        }
        let expiresAt = claims.exp.value
        let lifetime = expiresAt.timeIntervalSince(claims.iat.value)
        let renewAfter = expiresAt.addingTimeInterval(-min(app.policy.renewalWindow.timeInterval, lifetime / 2))
        let time = ISO8601DateFormatter()
        answer["expiresAt"] = .string(time.string(from: expiresAt))
        answer["renewAfter"] = .string(time.string(from: renewAfter))
        answer["state"] = .string((now >= renewAfter ? State.renewalRequired : State.active).rawValue)
        return .object(answer)
    }

    /// Whether the token belongs to this installation: it names it (`ins`), or the device key it
    /// was issued through was registered from it.
    func issuedTo(_ claims: AccessTokenClaims, appID: String, installationID: String) async throws -> Bool {
        let digest = Self.installationDigest(appID: appID, installationID: installationID)
        if let named = claims.ins { return SecretDigest.constantTimeEquals(named, digest) }
        guard let keyID = claims.deviceKey, let key = try await store.signInKey(id: keyID) else { return false }
        return try await store.installations(appID: appID, installationID: installationID).contains { $0.id == key.installationRef }
    }

    /// How the person registered, from the provider that identified them (its
    /// `traits.registration`) or, failing that, the methods they used.
    func registrationType(of claims: AccessTokenClaims) -> String {
        if let idp = claims.idp, let type = plugins.identityProviders[idp]?.traits.registration { return type.rawValue }
        let methods = Set(claims.amr ?? [])
        if !methods.isDisjoint(with: ["hwk", "swk"]) { return "device" }
        if methods.contains("pwd") { return "password" }
        if methods.contains("otp") { return "passwordless" }
        return "other"
    }

    /// Logs an installation out: the refresh token (or the access token's) family is revoked at once,
    /// with every access token issued with it, on every node; the installation's state becomes
    /// `registration_required`. A public app's token is the only credential needed; a confidential
    /// app's refresh token comes with its client credentials. An unknown refresh token answers as a
    /// known one does (RFC 7009 section 2.2).
    public func logout(refreshToken: String?, accessToken: PresentedToken?, client: ClientCredentials?, clientIP: String?) async throws {
        let now = clock.now
        var family: String?
        var appID: String?
        var accountID: String?
        if let refreshToken, !refreshToken.isEmpty {
            if let record = try await store.refreshToken(digest: SecretDigest.sha256Hex(refreshToken)) {
                // A confidential app's refresh token goes with its client credentials (RFC 7009 section 2.1).
                if let app = try await store.app(id: record.appID), app.isConfidential {
                    try await oauth.clients.verify(client, for: app, clientIP: clientIP)
                }
                (family, appID, accountID) = (record.familyID, record.appID, record.accountID)
            }
        } else if let accessToken {
            // A token that expired a moment ago still logs its family out; an old one does not
            // end the sessions its family has gone on to.
            let claims = try await oauth.authorize(accessToken, expiredGrace: SigningKeyring.retiredKeyGrace)
            (appID, accountID) = (claims.clientID, claims.stateless ? nil : claims.sub.value)
            // A confidential app's access token (which its resource servers see too) ends itself
            // only; its family ends with the refresh token and the app's credentials.
            if try await store.app(id: claims.clientID)?.isConfidential == false { family = claims.fid }
            try await oauth.revoker.accessToken(jti: claims.jti.value, expiresAt: claims.exp.value)
        } else {
            throw BrokerError(.invalidRequest, .badRequest, "Send the refresh_token (or the access token in the Authorization header) to log out.")
        }
        guard let appID else { return }
        var details: [String: String] = [:]
        if let family {
            details["revoked"] = String(try await oauth.revoker.family(family))
        }
        if let clientIP { details["clientIP"] = clientIP }
        try await store.appendAudit(AuditEvent(time: now, type: "account.logout", appID: appID, accountID: accountID, details: details))
    }

    /// Where the engine notes installations waiting for a profile confirmation.
    static let namespace = "gatehouse:registration"
    static func pendingKey(_ digest: String) -> String { "pending/\(digest)" }

    static func checkInstallationID(_ installationID: String) throws(BrokerError) {
        guard DeviceFacts.isValidInstallationID(installationID) else {
            throw BrokerError(.invalidRequest, .badRequest, "installation must be the app's installation id: 8 to 128 printable ASCII characters.")
        }
    }
}
