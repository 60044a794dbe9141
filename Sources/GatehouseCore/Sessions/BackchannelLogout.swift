import Foundation
import Logging

/// Sends logout tokens to the apps that got tokens in an ended session (OpenID Connect
/// Back-Channel Logout 1.0 section 2.5): a form POST of `logout_token`, answered `200` (any 2xx) by
/// an app that logged the session out. A network failure or a 5xx is tried again after each of
/// `retryDelays`; a 4xx is the app refusing the token and is not. The outcome is audited.
public struct BackchannelLogout: Sendable {
    let http: any OutboundHTTP
    let keyring: SigningKeyring
    let audit: any AuditStore
    let clock: any BrokerClock
    let logger: Logger
    let issuer: String
    /// Waits between attempts: about 2 s, 10 s, 1 min and 5 min after the first.
    let retryDelays: [TimeInterval]
    let pause: @Sendable (TimeInterval) async -> Void

    public static let defaultRetryDelays: [TimeInterval] = [2, 10, 60, 300]

    public init(
        http: any OutboundHTTP, keyring: SigningKeyring, audit: any AuditStore, clock: any BrokerClock, logger: Logger, issuer: String,
        retryDelays: [TimeInterval] = Self.defaultRetryDelays,
        pause: @escaping @Sendable (TimeInterval) async -> Void = { try? await Task.sleep(nanoseconds: UInt64($0 * 1_000_000_000)) }
    ) {
        self.http = http
        self.keyring = keyring
        self.audit = audit
        self.clock = clock
        self.logger = logger
        self.issuer = issuer
        self.retryDelays = retryDelays
        self.pause = pause
    }

    /// Signs one logout token per app and delivers them; returns when every delivery has succeeded or
    /// given up (callers that must not wait run it in a task of its own).
    public func notify(_ session: BrowserSession, apps: [App]) async {
        await withTaskGroup(of: Void.self) { group in
            for app in apps {
                guard let uri = app.policy.logout.backchannelLogoutURI else { continue }
                group.addTask { await deliver(session, to: app, uri: uri) }
            }
        }
    }

    /// Returns whether the app acknowledged the logout.
    @discardableResult
    func deliver(_ session: BrowserSession, to app: App, uri: String) async -> Bool {
        var attempt = 0
        var failure = ""
        while true {
            attempt += 1
            do {
                // Signed afresh for every attempt: a retry minutes later must not carry an expired
                // token, nor a `jti` the app has seen.
                let token = try await keyring.sign(
                    LogoutTokenClaims(issuer: issuer, subject: session.accountID, audience: app.id, sessionID: session.id, issuedAt: clock.now),
                    algorithm: app.policy.idTokenSigningAlg
                )
                var body = URLComponents()
                body.queryItems = [URLQueryItem(name: "logout_token", value: token)]
                let request = OutboundRequest(
                    method: "POST", url: uri, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                    body: Data((body.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B").utf8), timeout: 10, maxResponseBytes: 16 * 1024
                )
                let response = try await http.send(request)
                if (200..<300).contains(response.status) {
                    await record("logout.backchannel_delivered", session: session, app: app, outcome: nil, details: ["attempts": String(attempt)])
                    return true
                }
                failure = "HTTP \(response.status)"
                // The app read the token and refused it: sending it again changes nothing.
                if (400..<500).contains(response.status) { break }
            } catch {
                failure = "\(error)"
            }
            logger.notice("back-channel logout attempt failed", metadata: ["app": .string(app.id), "attempt": .stringConvertible(attempt), "error": .string(failure)])
            guard attempt <= retryDelays.count else { break }
            await pause(retryDelays[attempt - 1])
        }
        await record(
            "logout.backchannel_failed", session: session, app: app, outcome: "delivery_failed", details: ["attempts": String(attempt), "error": String(failure.prefix(200))]
        )
        return false
    }

    private func record(_ type: String, session: BrowserSession, app: App, outcome: String?, details: [String: String]) async {
        var details = details
        details["sid"] = session.id
        try? await audit.appendAudit(AuditEvent(time: clock.now, type: type, appID: app.id, accountID: session.accountID, outcome: outcome, details: details))
    }
}
