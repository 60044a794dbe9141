import Crypto
import Foundation
import Logging

/// Delivers the outbox: every node runs it (`runOnce` every second), takes the due deliveries (each
/// under a lease, so two nodes never send one at once, and a node that dies mid-delivery leaves it
/// to another once the lease ends), and sends them: audit events as CloudEvents 1.0 to the app's
/// webhook, signed like Stripe's (`Gatehouse-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "t.body")>`),
/// and back-channel logout tokens to the app's logout URI. A 2xx is a delivery; anything else is
/// tried again after each of the retry delays, then the delivery is dead (listed for administrators,
/// who may replay it). A logout token an app refuses with a 4xx is dead at once (sending it again
/// changes nothing). Delivery is at least once: a receiver de-duplicates by the event id.
public struct EventDelivery: Sendable {
    let store: any BrokerStore
    let http: any OutboundHTTP
    let keyring: SigningKeyring
    let secrets: PluginStorage
    let clock: any BrokerClock
    let logger: Logger
    let issuer: String
    let settings: EventSettings

    /// How long a receiver has to answer; leases are longer (`EventSettings`).
    static let timeout: TimeInterval = 10
    /// Receivers' answers are read (and dropped) up to this size; a longer one counts as a failure.
    static let maxResponseBytes = 1 << 20

    /// The store namespace of the webhook signing secrets (a colon: no plugin instance id has one).
    static let secretsNamespace = "gatehouse:webhooks"

    public init(
        store: any BrokerStore, http: any OutboundHTTP, keyring: SigningKeyring, sealer: SecretSealer, clock: any BrokerClock, logger: Logger, issuer: String,
        settings: EventSettings = EventSettings()
    ) {
        self.store = store
        self.http = http
        self.keyring = keyring
        self.secrets = PluginStorage(namespace: Self.secretsNamespace, store: store, clock: clock, sealer: sealer)
        self.clock = clock
        self.logger = logger
        self.issuer = issuer
        self.settings = settings
    }

    /// Sends what is due now, round after round while a round sent something (a subject's next
    /// delivery is due only once the one before it is done); answers how many deliveries were
    /// attempted. Deliveries of different subjects go at once; each subject's in order.
    @discardableResult
    public func runOnce(limit: Int = 50, rounds: Int = 20) async -> Int {
        var attempted = 0
        for _ in 0..<rounds {
            let sent = await round(limit: limit)
            attempted += sent
            if sent == 0 { break }
        }
        return attempted
    }

    /// One round: the first pending delivery of each subject that is due, under leases.
    func round(limit: Int) async -> Int {
        let now = clock.now
        let due: [OutboxItem]
        do {
            due = try await store.dueOutboxItems(now: now, limit: limit)
        } catch {
            logger.warning("could not read the event outbox", metadata: ["error": "\(error)"])
            return 0
        }
        var leased: [(OutboxItem, String)] = []
        for item in due {
            let token = RandomToken.make(byteCount: 16)
            if (try? await store.leaseOutboxItem(id: item.id, until: now.addingTimeInterval(settings.lease.timeInterval), now: now, token: token)) == true {
                leased.append((item, token))
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for (item, token) in leased { group.addTask { await attempt(item, lease: token) } }
        }
        return leased.count
    }

    /// One attempt of one leased delivery, and its record.
    func attempt(_ item: OutboxItem, lease: String) async {
        let attempt = item.attempts + 1
        let outcome: Outcome
        do {
            guard let app = try await store.app(id: item.appID) else {
                outcome = .giveUp("the app was deleted")
                return await record(item, lease: lease, attempt: attempt, outcome)
            }
            outcome =
                switch item.kind {
                case .event: try await sendEvent(item, app: app, attempt: attempt)
                case .backchannelLogout: try await sendLogoutToken(item, app: app)
                }
        } catch let error as OutboundHTTPError {
            // Never the URL (it may carry a token in its query).
            if case .invalidURL = error { outcome = .retry("the webhook URL is not usable") } else { outcome = .retry(error.description) }
        } catch {
            outcome = .retry(String(describing: type(of: error)))
        }
        await record(item, lease: lease, attempt: attempt, outcome)
    }

    enum Outcome {
        case delivered
        /// Not wanted (the app's event filter, or no URL any more): done without a request.
        case skipped
        case retry(String)
        case giveUp(String)
    }

    func record(_ item: OutboxItem, lease: String, attempt: Int, _ outcome: Outcome) async {
        let now = clock.now
        let delays = item.kind == .backchannelLogout ? settings.logoutRetryDelays : settings.retryDelays
        do {
            switch outcome {
            case .delivered, .skipped:
                try await store.finishOutboxAttempt(id: item.id, token: lease, delivered: true, nextAttemptAt: nil, dead: false, error: nil, now: now)
                if case .delivered = outcome, item.kind == .backchannelLogout {
                    await audit("logout.backchannel_delivered", item: item, outcome: nil, details: ["attempts": String(attempt)])
                }
            case .retry(let error) where attempt <= delays.count:
                logger.notice(
                    "delivery attempt failed",
                    metadata: [
                        "app": .string(item.appID), "kind": .string(item.kind.rawValue), "attempt": .stringConvertible(attempt),
                        "error": .string(String(error.prefix(200))),
                    ])
                try await store.finishOutboxAttempt(
                    id: item.id, token: lease, delivered: false, nextAttemptAt: now.addingTimeInterval(delays[attempt - 1].timeInterval), dead: false,
                    error: String(error.prefix(500)), now: now
                )
            case .retry(let error), .giveUp(let error):
                logger.warning("delivery given up", metadata: ["app": .string(item.appID), "kind": .string(item.kind.rawValue), "attempts": .stringConvertible(attempt)])
                try await store.finishOutboxAttempt(
                    id: item.id, token: lease, delivered: false, nextAttemptAt: nil, dead: true, error: String(error.prefix(500)), now: now)
                let type = item.kind == .backchannelLogout ? "logout.backchannel_failed" : "webhook.dead_letter"
                await audit(type, item: item, outcome: "delivery_failed", details: ["attempts": String(attempt), "error": String(error.prefix(200))])
            }
        } catch {
            // The lease runs out and the delivery is tried again: at least once.
            logger.warning("could not record a delivery attempt", metadata: ["error": "\(error)"])
        }
    }

    /// Audits a delivery's end. (The store never sends `webhook.*` events to a webhook: a dead
    /// letter of a failing webhook must not make another.)
    func audit(_ type: String, item: OutboxItem, outcome: String?, details: [String: String]) async {
        var details = details
        details["delivery"] = String(item.id)
        var accountID: String?
        if item.kind == .backchannelLogout, let payload = try? JSONDecoder().decode([String: String].self, from: Data(item.payload.utf8)) {
            details["sid"] = payload["sid"]
            accountID = payload["sub"]
        }
        try? await store.appendAudit(AuditEvent(time: clock.now, type: type, appID: item.appID, accountID: accountID, outcome: outcome, details: details))
    }

    // MARK: - Webhook events

    /// The CloudEvent of an audit event (structured mode, CloudEvents 1.0 JSON format).
    static func cloudEvent(of event: AuditEvent, issuer: String) -> JSONValue {
        var data: [String: JSONValue] = ["details": .object(event.details.mapValues(JSONValue.string))]
        if let app = event.appID { data["app"] = .string(app) }
        if let account = event.accountID { data["account"] = .string(account) }
        if let provider = event.providerID { data["provider"] = .string(provider) }
        if let outcome = event.outcome { data["outcome"] = .string(outcome) }
        var members: [String: JSONValue] = [
            "specversion": "1.0", "id": .string(event.id), "source": .string(issuer), "type": .string("gatehouse." + event.type),
            "time": .string(ISO8601DateFormatter().string(from: event.time)), "datacontenttype": "application/json", "data": .object(data),
        ]
        if let account = event.accountID { members["subject"] = .string(account) }
        return .object(members)
    }

    /// The `Gatehouse-Signature` header's value for `body` sent at `time`: one `v1` signature per
    /// secret, the current one first (then, during a rotation's overlap, the previous one).
    public static func signature(of body: Data, at time: Int, secrets: [Data]) -> String {
        let signatures = secrets.map { secret in
            "v1=" + HMAC<SHA256>.authenticationCode(for: Data("\(time).".utf8) + body, using: SymmetricKey(data: secret)).map { String(format: "%02x", $0) }.joined()
        }
        return (["t=\(time)"] + signatures).joined(separator: ",")
    }

    func sendEvent(_ item: OutboxItem, app: App, attempt: Int) async throws -> Outcome {
        let event = try JSONDecoder().decode(AuditEvent.self, from: Data(item.payload.utf8))
        guard let url = app.policy.webhook.url, app.policy.webhook.wants(event.type) else { return .skipped }
        guard let stored = try await secrets.secret(key: app.id)?.value else {
            return .retry("the app has no webhook signing secret yet (POST /admin/v1/apps/\(app.id)/webhook/secret)")
        }
        // During a rotation's overlap the previous secret signs too.
        let signing = WebhookSecrets(stored: stored).signing(at: clock.now)
        let body = Data(Self.cloudEvent(of: event, issuer: issuer).serialized())
        let time = Int(clock.now.timeIntervalSince1970)
        let request = OutboundRequest(
            method: "POST", url: url,
            headers: [
                ("Content-Type", "application/cloudevents+json"), ("Gatehouse-Signature", Self.signature(of: body, at: time, secrets: signing)),
                ("Gatehouse-Event-Id", event.id), ("Gatehouse-Delivery-Attempt", String(attempt)),
            ],
            body: body, timeout: Self.timeout, maxResponseBytes: Self.maxResponseBytes
        )
        let response = try await http.send(request)
        return (200..<300).contains(response.status) ? .delivered : .retry("HTTP \(response.status)")
    }

    // MARK: - Back-channel logout

    /// OpenID Connect Back-Channel Logout 1.0 section 2.5: a form POST of a logout token, signed afresh
    /// for every attempt (a retry minutes later must not carry an expired token, nor a `jti` the app has seen).
    func sendLogoutToken(_ item: OutboxItem, app: App) async throws -> Outcome {
        guard let uri = app.policy.logout.backchannelLogoutURI else { return .skipped }
        let payload = try JSONDecoder().decode([String: String].self, from: Data(item.payload.utf8))
        guard let sid = payload["sid"], let subject = payload["sub"] else { return .giveUp("the delivery is malformed") }
        let token = try await keyring.sign(
            LogoutTokenClaims(issuer: issuer, subject: subject, audience: app.id, sessionID: sid, issuedAt: clock.now), algorithm: app.policy.idTokenSigningAlg
        )
        var body = URLComponents()
        body.queryItems = [URLQueryItem(name: "logout_token", value: token)]
        let request = OutboundRequest(
            method: "POST", url: uri, headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data((body.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B").utf8), timeout: Self.timeout,
            maxResponseBytes: Self.maxResponseBytes
        )
        let response = try await http.send(request)
        if (200..<300).contains(response.status) { return .delivered }
        // The app read the token and refused it: sending it again changes nothing.
        if (400..<500).contains(response.status) { return .giveUp("HTTP \(response.status)") }
        return .retry("HTTP \(response.status)")
    }
}
