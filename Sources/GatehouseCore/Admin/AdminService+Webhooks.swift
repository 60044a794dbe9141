import Foundation

/// An app's webhook as administrators manage it: its signing secret (made here, shown once, kept
/// sealed), the deliveries that were given up (dead letters), and replaying them.
extension AdminService {
    /// A dead (or any) delivery as the admin API and the console show it.
    public struct DeliveryView: Sendable, Codable, Hashable {
        public var id: Int64
        public var kind: String
        /// The event's type (`signin.success`), or `backchannel_logout`.
        public var type: String
        public var eventID: String?
        public var subject: String
        public var createdAt: Date
        public var attempts: Int
        public var lastError: String?
    }

    /// A new webhook signing secret for the app, returned once (`whsec_` and 32 random bytes). The
    /// one it replaces keeps signing beside it for `overlap` (default `events.webhookSecretOverlap`),
    /// so receivers move to the new one without an outage; an overlap of 0 stops it at once (a
    /// leaked secret), as does the next rotation for the one before it.
    public func rotateWebhookSecret(id: String, overlap: Seconds? = nil, by admin: AdminIdentity) async throws -> String {
        let app = try await existingApp(id)
        let overlap = overlap ?? oauth.events.settings.webhookSecretOverlap
        guard (0...7 * 86_400).contains(overlap.value) else {
            throw BrokerError(.invalidRequest, .badRequest, "overlap must be between 0s and 7d.", issues: [ConfigIssue(path: "overlap", "must be between 0s and 7d")])
        }
        let secret = "whsec_" + RandomToken.make()
        let storage = oauth.events.secrets
        let conflict = BrokerError(.conflict, .conflict, "The webhook secret was changed at the same moment; try again.")
        let now = clock.now
        // One record, one compare-and-swap: the new secret, and the one it replaces for the overlap.
        let existing = try await storage.secret(key: app.id)
        if let stored = existing {
            let replaced = WebhookSecrets(stored: stored.value).current
            let next =
                overlap.value > 0
                ? WebhookSecrets(current: secret, previous: replaced, previousUntil: now.addingTimeInterval(overlap.timeInterval)) : WebhookSecrets(current: secret)
            guard try await storage.replaceWithSecret(next.stored, key: app.id, version: stored.version) else { throw conflict }
        } else if try await !storage.insertSecret(WebhookSecrets(current: secret).stored, key: app.id) {
            throw conflict
        }
        var details = admin.auditDetails
        // Where events go, without a path or query that might hold a token.
        details["host"] = app.policy.webhook.url.flatMap { URLComponents(string: $0)?.host } ?? ""
        details["previousSignsUntil"] =
            existing == nil ? "none" : overlap.value > 0 ? ISO8601DateFormatter().string(from: now.addingTimeInterval(overlap.timeInterval)) : "now"
        try await store.appendAudit(AuditEvent(time: now, type: "webhook.secret_rotated", appID: app.id, details: details))
        return secret
    }

    /// The app's deliveries that were given up, newest first.
    public func deadLetters(id: String, limit: Int = 100) async throws -> [DeliveryView] {
        let app = try await existingApp(id)
        return try await store.outboxItems(appID: app.id, status: .dead, limit: max(1, min(limit, 1000))).map(Self.view)
    }

    /// Sends a dead delivery again (it goes before the later deliveries of its subject, as it came
    /// before them); answers 404 when the app has no such dead delivery.
    public func replay(id: String, delivery: Int64, by admin: AdminIdentity) async throws {
        let app = try await existingApp(id)
        guard try await store.replayOutboxItem(id: delivery, appID: app.id, now: clock.now) else {
            throw BrokerError(.notFound, .notFound, "The app has no dead delivery \(delivery).")
        }
        var details = admin.auditDetails
        details["delivery"] = String(delivery)
        try await store.appendAudit(AuditEvent(time: clock.now, type: "webhook.replayed", appID: app.id, details: details))
    }

    /// Replays every dead delivery of the app; answers how many.
    public func replayAll(id: String, by admin: AdminIdentity) async throws -> Int {
        var replayed = 0
        // In pages, oldest first; one replayed by someone else meanwhile is skipped.
        while true {
            let letters = try await deadLetters(id: id, limit: 1000)
            var progressed = false
            for letter in letters.reversed() {
                do {
                    try await replay(id: id, delivery: letter.id, by: admin)
                    replayed += 1
                    progressed = true
                } catch let error as BrokerError where error.kind == .notFound {
                    continue
                }
            }
            if letters.count < 1000 || !progressed { return replayed }
        }
    }

    static func view(_ item: OutboxItem) -> DeliveryView {
        var type = item.kind.rawValue
        var eventID: String?
        if item.kind == .event, let event = try? JSONDecoder().decode(AuditEvent.self, from: Data(item.payload.utf8)) {
            type = event.type
            eventID = event.id
        }
        return DeliveryView(
            id: item.id, kind: item.kind.rawValue, type: type, eventID: eventID, subject: item.subject, createdAt: item.createdAt, attempts: item.attempts,
            lastError: item.lastError)
    }
}
