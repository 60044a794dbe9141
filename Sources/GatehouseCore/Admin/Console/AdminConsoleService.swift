import Foundation
import Logging

/// The admin console's sign-in and sessions. The console is an OpenID Connect client of this very
/// broker (app `gatehouse-console`, code flow with PKCE S256, state and nonce): a sign-in goes through
/// `/oauth2/authorize` like any app's, the code is exchanged by the token endpoint's own code, and the
/// ID token is verified like a relying party would. People are admitted when their account holds the
/// admin role (`AdminRoleBook`) or the ID token's `groups` name one of `admin.consoleGroups`; the
/// static admin token can make the first admin, once.
public struct AdminConsoleService: Sendable {
    public let config: ConsoleConfig
    /// The console (admins) or the account page (everyone with an account).
    public let site: ConsoleSite
    let consoleGroups: Set<String>
    let issuer: String
    let store: any BrokerStore
    let oauth: OAuthService
    let gate: AdminGate
    let roles: AdminRoleBook
    let sealer: SecretSealer
    let clock: any BrokerClock
    let logger: Logger

    var sessionNamespace: String { site.sessionNamespace }
    /// How long a sign-in may take from the console's redirect to the callback.
    static let signInLifetime: TimeInterval = 600
    /// A session's last use is written at most this often (a write per page would be wasteful).
    static let touchInterval: TimeInterval = 60

    /// The admin console, or with `site` `.account` the account page under `account` (its config).
    public init(
        admin: AdminConfig, issuer: String, store: any BrokerStore, oauth: OAuthService, gate: AdminGate, sealer: SecretSealer, clock: any BrokerClock, logger: Logger,
        site: ConsoleSite = .admin, account: ConsoleConfig? = nil
    ) {
        self.site = site
        self.config = site == .account ? account ?? ConsoleConfig() : admin.console
        self.sealer = sealer
        self.consoleGroups = Set(admin.consoleGroups)
        self.issuer = issuer
        self.store = store
        self.oauth = oauth
        self.gate = gate
        self.roles = AdminRoleBook(store: store, clock: clock)
        self.clock = clock
        self.logger = logger
    }

    public var redirectURI: String { issuer + site.path + "/callback" }
    public var signedOutURI: String { issuer + site.path + "/signed-out" }

    // MARK: - Signing in

    /// What a sealed sign-in cookie is bound to (AES-GCM's additional data): it opens as nothing else.

    /// Starts a sign-in: the cookie that binds it to this browser, and the authorization request to
    /// send the browser to. `reauthenticate` asks the broker for a fresh sign-in (`prompt=login`).
    /// The pending sign-in (state, nonce, PKCE verifier, where to return, its expiry) travels sealed
    /// in the cookie, under the key-encryption key: nothing is stored, so anonymous requests cannot
    /// grow the store, and no rate limit is needed that could lock admins out.
    public func beginSignIn(returnTo: String?, reauthenticate: Bool) async throws -> (cookie: String, location: String) {
        let attempt = ConsoleSignInAttempt(
            state: RandomToken.make(), nonce: RandomToken.make(), codeVerifier: RandomToken.make(), returnTo: safeReturn(returnTo),
            reauthentication: reauthenticate, expiresAt: clock.now.addingTimeInterval(Self.signInLifetime)
        )
        let cookie = try sealer.seal(JSONEncoder().encode(attempt), context: site.signInCookieContext)
        var query = URLComponents()
        query.queryItems = [
            URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: site.appID),
            URLQueryItem(name: "redirect_uri", value: redirectURI), URLQueryItem(name: "scope", value: site.scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: attempt.state), URLQueryItem(name: "nonce", value: attempt.nonce),
            URLQueryItem(name: "code_challenge", value: PKCE.challenge(for: attempt.codeVerifier)), URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if reauthenticate { query.queryItems?.append(URLQueryItem(name: "prompt", value: "login")) }
        // `+` is literal in a query built by URLComponents, but a form decoder reads it as a space.
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        return (cookie, issuer + "/oauth2/authorize?" + encoded)
    }

    /// The end of a sign-in: what the console does next.
    public enum SignInResult: Sendable {
        /// Admitted: set the session cookie and go to `returnTo`.
        case admitted(cookie: String, session: ConsoleSession, returnTo: String)
        /// Signed in but not an admin; `bootstrapOpen` when the first-admin bootstrap is still open.
        case refused(cookie: String, session: ConsoleSession, bootstrapOpen: Bool)
    }

    /// Finishes a sign-in at the callback: checks the state against the one this browser started,
    /// exchanges the code (with the PKCE verifier) at the token endpoint's code, verifies the ID token
    /// (signature, issuer, audience, expiry, nonce) and decides whether the person is admitted.
    public func finishSignIn(cookie: String?, state: String?, code: String?, error: String?, clientIP: String?, previous: String? = nil) async throws -> SignInResult {
        // A replayed callback gets no further: its code was used at the token endpoint already.
        guard let cookie, let sealed = try? sealer.open(cookie, context: site.signInCookieContext),
            let attempt = try? JSONDecoder().decode(ConsoleSignInAttempt.self, from: sealed), attempt.expiresAt > clock.now
        else {
            throw BrokerError(.invalidRequest, .badRequest, "This sign-in was not started in this browser, or it took too long. Sign in again.")
        }
        guard let state, SecretDigest.constantTimeEquals(state, attempt.state) else {
            throw BrokerError(.invalidRequest, .badRequest, "The sign-in's state does not match. Sign in again.")
        }
        if let error {
            throw BrokerError(.accessDenied, .forbidden, "The sign-in did not finish (\(error)).")
        }
        guard let code else { throw BrokerError(.invalidRequest, .badRequest, "The sign-in came back without a code.") }
        let request = try TokenRequest(
            form: [
                "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "code_verifier": attempt.codeVerifier, "client_id": site.appID,
            ],
            basic: nil, clientIP: clientIP
        )
        let issued = try await oauth.token(request)
        let now = clock.now
        guard let idToken = issued.idToken, let claims = await oauth.tokens.keyring.verifyIDTokenHint(idToken, issuer: issuer),
            claims.aud == site.appID, Double(claims.exp) > now.timeIntervalSince1970, let nonce = claims.nonce,
            SecretDigest.constantTimeEquals(nonce, attempt.nonce)
        else {
            throw BrokerError(.invalidGrant, .badRequest, "The broker's ID token did not verify. Sign in again.")
        }
        let groups = claims.profile["groups"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let username = claims.profile["preferred_username"]?.stringValue ?? claims.sub
        let admittedBy = try await admission(accountID: claims.sub, groups: groups)
        // A new sign-in (or re-authentication) replaces the browser's previous console session.
        if let previous { _ = try await store.deletePluginRecord(namespace: sessionNamespace, key: SecretDigest.sha256Hex(previous)) }
        let session = ConsoleSession(
            accountID: claims.sub, username: username, sessionID: claims.sid, authTime: Date(timeIntervalSince1970: TimeInterval(claims.authTime)),
            admittedBy: admittedBy, csrfToken: RandomToken.make(), methods: claims.amr, idToken: idToken, createdAt: now, lastSeenAt: now,
            expiresAt: now.addingTimeInterval(config.sessionLifetime.timeInterval)
        )
        let sessionCookie = RandomToken.make()
        guard
            try await store.insertPluginRecord(
                namespace: sessionNamespace, key: SecretDigest.sha256Hex(sessionCookie), value: JSONEncoder().encode(session), expiresAt: session.expiresAt,
                now: now
            )
        else { throw BrokerError.internalFailure("Could not start the console session.") }
        try await audit(
            site.auditPrefix + (admittedBy == nil ? "refused" : (attempt.reauthentication ? "reauthenticated" : "signed_in")), session: session,
            details: site == .admin ? admittedBy.map { ["admittedBy": $0] } ?? [:] : [:]
        )
        guard admittedBy != nil else {
            return .refused(cookie: sessionCookie, session: session, bootstrapOpen: try await bootstrapOpen())
        }
        return .admitted(cookie: sessionCookie, session: session, returnTo: attempt.returnTo)
    }

    /// `role` for an account holding the admin role, `group:<name>` for a member of a console group.
    func admission(accountID: String, groups: [String]) async throws -> String? {
        // The account page admits everyone to their own account.
        // Test accounts skip second factors, so they are not managed here either.
        if site == .account { return try await store.account(id: accountID).map { $0.isTest ? nil : Self.selfAdmission } ?? nil }
        // Test accounts skip second factors: never an admin.
        guard let account = try await store.account(id: accountID), !account.isTest else { return nil }
        if try await roles.isAdmin(accountID) { return "role" }
        if let group = groups.sorted().first(where: consoleGroups.contains) { return "group:\(group)" }
        return nil
    }

    /// How the account page admits a person: to their own account.
    static let selfAdmission = "self"

    /// Whether the static admin token may still make the first admin: tokens are configured, nobody
    /// has used the bootstrap yet, and no account holds the role.
    public func bootstrapOpen() async throws -> Bool {
        guard !gate.credentials.isEmpty, try await !roles.bootstrapClaimed() else { return false }
        return try await roles.grants().isEmpty
    }

    /// The first admin: a signed-in person who is not an admin proves they hold the static admin token
    /// (checked like the admin API checks it, failures counted per address) and their account gets the
    /// admin role. Works once, ever.
    public func bootstrap(cookie: String?, csrf: String?, adminToken: String, clientIP: String?) async throws -> ConsoleSession {
        guard let session = try await self.session(cookie: cookie), let cookie else { throw Self.signInAgain }
        try checkCSRF(session, csrf)
        guard !session.isAdmitted else { return session }
        let closed = BrokerError(.adminRoleRequired, .forbidden, "An admin exists already: ask them (or use `gatehouse admins grant`) for the admin role.")
        // Closed first: once an admin exists, this form tells nobody whether a token is right.
        guard try await bootstrapOpen() else { throw closed }
        let tokenAdmin = try await gate.authenticate(bearer: adminToken, clientIP: clientIP)
        guard try await roles.claimBootstrap(for: session.accountID) else { throw closed }
        _ = try await roles.add(session.accountID, by: "bootstrap:\(tokenAdmin.name)")
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: "admin.role_granted", accountID: session.accountID,
                details: ["admin": tokenAdmin.name, "username": session.username, "role": AdminRoleBook.admin, "bootstrap": "true"]
            )
        )
        var admitted = session
        admitted.admittedBy = "role"
        // The session is re-read from the store on every request: write the admission under the
        // same cookie (the role is stored already, so a lost write only means signing in again).
        guard let record = try await store.pluginRecord(namespace: sessionNamespace, key: SecretDigest.sha256Hex(cookie), now: clock.now),
            try await store.replacePluginRecord(
                namespace: sessionNamespace, key: SecretDigest.sha256Hex(cookie), value: JSONEncoder().encode(admitted), expiresAt: admitted.expiresAt,
                expectedVersion: record.version
            )
        else { throw Self.signInAgain }
        return admitted
    }

    // MARK: - Sessions

    /// The console session of this cookie if it is still good: not past its lifetime or idle
    /// limit, its broker session not ended, and the person still an admin (a removed role counts at
    /// once). Sessions only open to the bootstrap come back too; check `isAdmitted`.
    public func session(cookie: String?) async throws -> ConsoleSession? {
        guard let cookie, let (record, session) = try await stored(cookie: cookie) else { return nil }
        let now = clock.now
        let key = SecretDigest.sha256Hex(cookie)
        var live = session.expiresAt > now && session.lastSeenAt.addingTimeInterval(config.idleLifetime.timeInterval) > now
        if live, let sessionID = session.sessionID {
            live = try await store.browserSession(id: sessionID)?.isLive(at: now) ?? false
        }
        if live, session.admittedBy == Self.selfAdmission {
            // The account page: the account must still exist, and not be disabled.
            let account = try await store.account(id: session.accountID)
            live = site == .account && account.map { !$0.isDisabled } ?? false
        } else if live, site != .admin {
            live = false
        } else if live, session.admittedBy == "role" {
            live = try await roles.isAdmin(session.accountID)
        } else if live, let admittedBy = session.admittedBy, admittedBy.hasPrefix("group:") {
            let group = admittedBy.dropFirst("group:".count)
            // A group taken out of admin.consoleGroups (and a restart) admits nobody any more;
            // leaving the group in the directory counts from the next sign-in.
            live = consoleGroups.contains(String(group))
        }
        guard live else {
            _ = try await store.deletePluginRecord(namespace: sessionNamespace, key: key)
            return nil
        }
        if now.timeIntervalSince(session.lastSeenAt) >= Self.touchInterval {
            var touched = session
            touched.lastSeenAt = now
            // A lost race means another request touched it at the same moment: nothing to do.
            _ = try await store.replacePluginRecord(
                namespace: sessionNamespace, key: key, value: JSONEncoder().encode(touched), expiresAt: touched.expiresAt, expectedVersion: record.version
            )
            return touched
        }
        return session
    }

    private func stored(cookie: String) async throws -> (PluginRecord, ConsoleSession)? {
        guard let record = try await store.pluginRecord(namespace: sessionNamespace, key: SecretDigest.sha256Hex(cookie), now: clock.now),
            let session = try? JSONDecoder().decode(ConsoleSession.self, from: record.value)
        else { return nil }
        return (record, session)
    }

    /// Every console form carries the session's CSRF token; anything else is refused.
    public func checkCSRF(_ session: ConsoleSession, _ token: String?) throws {
        guard let token, SecretDigest.constantTimeEquals(token, session.csrfToken) else {
            throw BrokerError(.invalidCSRFToken, .forbidden, "This form is out of date or did not come from the console. Reload the page and try again.")
        }
    }

    /// Whether the sign-in is recent enough for a dangerous action.
    public func isRecent(_ session: ConsoleSession) -> Bool {
        clock.now.timeIntervalSince(session.authTime) <= config.reauthenticateAfter.timeInterval
    }

    /// Refuses a dangerous action after a sign-in older than `reauthenticateAfter`.
    public func requireRecentSignIn(_ session: ConsoleSession) throws {
        guard isRecent(session) else {
            throw BrokerError(
                .reauthenticationRequired, .unauthenticated,
                "Sign in again to confirm this action: your sign-in is older than \(config.reauthenticateAfter.value / 60) minutes."
            )
        }
    }

    /// Ends the console session (on every node) and answers where the browser goes to end the broker
    /// session as well (RP-initiated logout, which comes back to `/admin/signed-out`).
    public func signOut(cookie: String?) async throws -> String? {
        guard let cookie, let (_, session) = try await stored(cookie: cookie) else { return nil }
        _ = try await store.deletePluginRecord(namespace: sessionNamespace, key: SecretDigest.sha256Hex(cookie))
        try await audit(site.auditPrefix + "signed_out", session: session)
        var query = URLComponents()
        query.queryItems = [
            URLQueryItem(name: "id_token_hint", value: session.idToken), URLQueryItem(name: "client_id", value: site.appID),
            URLQueryItem(name: "post_logout_redirect_uri", value: signedOutURI),
        ]
        return issuer + "/oauth2/logout?" + (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
    }

    // MARK: - Drafts

    static let draftContext = "gatehouse:console-draft"
    /// How long a kept draft waits for the admin to sign in again.
    static let draftLifetime: TimeInterval = 1800
    /// A cookie larger than this is not set (browsers keep about 4 KB per cookie).
    public static let draftCookieLimit = 3800

    /// The sealed draft of a form posted after its session ended, or nil when it is too large to keep
    /// in a cookie. The caller keeps drafts only of posts that came from the console's own pages (they
    /// carry its cookie, which a cross-site form cannot send): a draft is shown, never saved, until the
    /// admin presses Save with a fresh session.
    public func sealDraft(path: String, fields: [String: String]) throws -> String? {
        let draft = ConsoleDraft(path: path, fields: fields.filter { $0.key != "csrf" }, expiresAt: clock.now.addingTimeInterval(Self.draftLifetime))
        let sealed = try sealer.seal(JSONEncoder().encode(draft), context: Self.draftContext)
        return sealed.utf8.count <= Self.draftCookieLimit ? sealed : nil
    }

    /// The draft a cookie holds, if it opens and has not expired.
    public func openDraft(_ cookie: String?) -> ConsoleDraft? {
        guard let cookie, let data = try? sealer.open(cookie, context: Self.draftContext), let draft = try? JSONDecoder().decode(ConsoleDraft.self, from: data),
            draft.expiresAt > clock.now
        else { return nil }
        return draft
    }

    public static let signInAgain = BrokerError(.loginRequired, .unauthenticated, "Your console session has ended. Sign in again.")

    /// Only paths inside the console are places to return to (no open redirect).
    public static func safeReturn(_ path: String?) -> String { safeReturn(path, site: .admin) }

    /// Only paths inside this site are places to return to (no open redirect).
    public func safeReturn(_ path: String?) -> String { Self.safeReturn(path, site: site) }

    static func safeReturn(_ path: String?, site: ConsoleSite) -> String {
        let home = site.path + "/"
        guard let path, path.hasPrefix(home) || path == site.path, !path.hasPrefix("/admin/v1"), !path.contains("//"), !path.contains("\\"),
            path.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return site == .admin ? home : site.path }
        return path
    }

    private func audit(_ type: String, session: ConsoleSession, details: [String: String] = [:]) async throws {
        let who = site == .admin ? ["admin": session.username, "adminAccount": session.accountID] : ["username": session.username]
        try await store.appendAudit(
            AuditEvent(time: clock.now, type: type, appID: site.appID, accountID: session.accountID, details: details.merging(who) { first, _ in first })
        )
    }
}
