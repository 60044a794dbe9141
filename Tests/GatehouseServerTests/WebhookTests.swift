import Crypto
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseTesting
import Hummingbird
import HummingbirdTesting
import LocalPassword
import NIOCore
import Synchronization
import Testing

/// The event stream for back ends: audit events of an app with a webhook go out of the outbox as
/// signed CloudEvents, in order per subject, retried, given up to dead letters, and replayed.
extension GatehouseServerTests {
    /// A webhook receiver that records requests and answers 503 to any body holding "fail-me" while
    /// `failing` is on.
    final class WebhookReceiver: OutboundHTTP, @unchecked Sendable {
        let requests = Mutex<[OutboundRequest]>([])
        let failing = Mutex(true)
        func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
            requests.withLock { $0.append(request) }
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            return OutboundResponse(status: body.contains("fail-me") && failing.withLock({ $0 }) ? 503 : 200, body: Data())
        }
        /// The CloudEvents received, in order, as JSON objects.
        var events: [[String: JSONValue]] {
            requests.withLock { $0 }.compactMap { try? JSONDecoder().decode([String: JSONValue].self, from: $0.body ?? Data()) }
        }
    }

    static let webhookYAML =
        oidcYAML.replacingOccurrences(
            of: "      selfRegistration: true\n",
            with: "      selfRegistration: true\n      webhook: {url: \"https://hooks.example/gatehouse\", events: [\"signin.*\", \"test.*\"]}\n"
        ) + "\nevents:\n  retryDelays: [1, 2]\n"

    /// Rotating the signing secret without an outage (as Stripe does): for the overlap every delivery
    /// carries a `v1` signature with the new secret and one with the old, the new one first; after it
    /// (or at once with an overlap of 0) only the new one signs. A second rotation drops the oldest.
    @Test func aRotatedWebhookSecretKeepsSigningBesideTheNewOneForTheOverlap() async throws {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        let receiver = WebhookReceiver()
        receiver.failing.withLock { $0 = false }
        let yaml = Self.webhookYAML + "  webhookSecretOverlap: 2h\n"
        let test = try await TestBroker.make(
            yaml: yaml, registry: registry, environment: ["WEB_SECRET": Self.webSecret, "OTHER_SECRET": Self.otherSecret], http: receiver)
        defer { test.temporary.remove() }
        let admin = AdminIdentity(name: "test")
        /// The secrets whose signatures the next delivery carries, in order.
        func signers(_ candidates: [String]) async throws -> [String] {
            try await test.store.appendAudit(AuditEvent(time: test.clock.now, type: "test.rotation", appID: "web", accountID: "alice"))
            #expect(await test.broker.oauth.events.runOnce() == 1)
            let request = try #require(receiver.requests.withLock { $0.last })
            let header = try #require(request.headers.first { $0.name == "Gatehouse-Signature" }?.value)
            let parts = header.split(separator: ",").map(String.init)
            let t = try #require(parts.first?.dropFirst(2))
            return parts.dropFirst().map { part in
                candidates.first { secret in
                    let mac = HMAC<SHA256>.authenticationCode(for: Data("\(t).".utf8) + (request.body ?? Data()), using: SymmetricKey(data: Data(secret.utf8)))
                    return part == "v1=" + mac.map { String(format: "%02x", $0) }.joined()
                } ?? "unknown"
            }
        }
        let first = try await test.broker.admin.rotateWebhookSecret(id: "web", by: admin)
        #expect(try await signers([first]) == [first], "a first secret signs alone")
        let second = try await test.broker.admin.rotateWebhookSecret(id: "web", by: admin)
        #expect(try await signers([first, second]) == [second, first], "the new one first, the old one beside it")
        let rotated = try await test.store.auditEvents(type: "webhook.secret_rotated", appID: "web", accountID: nil, since: nil, limit: 5)
        #expect(rotated.contains { $0.details["previousSignsUntil"] == ISO8601DateFormatter().string(from: test.clock.now.addingTimeInterval(7200)) })
        test.clock.advance(by: 7199)
        #expect(try await signers([first, second]) == [second, first])
        test.clock.advance(by: 2)
        #expect(try await signers([first, second]) == [second], "the overlap is over")
        let third = try await test.broker.admin.rotateWebhookSecret(id: "web", by: admin)
        let fourth = try await test.broker.admin.rotateWebhookSecret(id: "web", by: admin)
        #expect(try await signers([first, second, third, fourth]) == [fourth, third], "a second rotation drops the oldest")
        let fifth = try await test.broker.admin.rotateWebhookSecret(id: "web", overlap: Seconds(0), by: admin)
        #expect(try await signers([third, fourth, fifth]) == [fifth], "an overlap of 0 stops the old secret at once")
        let refusal = await thrownError(BrokerError.self) { _ = try await test.broker.admin.rotateWebhookSecret(id: "web", overlap: .days(8), by: admin) }
        #expect(refusal?.code == .invalidRequest)
        #expect(
            configIssues(
                Self.webhookYAML + "  webhookSecretOverlap: 8d\n", registry: registry, environment: ["WEB_SECRET": Self.webSecret, "OTHER_SECRET": Self.otherSecret]
            )
            .first?.hasPrefix("events.webhookSecretOverlap: must be between 0s and 7d") == true)
    }

    @Test func webhookEventsAreSignedCloudEventsInOrderPerSubjectRetriedGivenUpAndReplayed() async throws {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        let receiver = WebhookReceiver()
        let test = try await TestBroker.make(
            yaml: Self.webhookYAML, registry: registry, environment: ["WEB_SECRET": Self.webSecret, "OTHER_SECRET": Self.otherSecret], http: receiver)
        defer { test.temporary.remove() }
        let events = test.broker.oauth.events
        let admin = AdminIdentity(name: "test")
        func audit(_ type: String, _ subject: String, _ marker: String = "") async throws -> AuditEvent {
            let event = AuditEvent(time: test.clock.now, type: type, appID: "web", accountID: subject, details: ["marker": marker])
            try await test.store.appendAudit(event)
            return event
        }

        // Without a signing secret nothing goes out: the event waits for its retry.
        let first = try await audit("test.first", "alice")
        #expect(await events.runOnce() == 1)
        #expect(receiver.requests.withLock { $0.isEmpty })
        let secret = try await test.broker.admin.rotateWebhookSecret(id: "web", by: admin)
        #expect(secret.hasPrefix("whsec_"))
        test.clock.advance(by: 1)
        #expect(await events.runOnce() == 1)
        let request = try #require(receiver.requests.withLock { $0.last })
        #expect(request.url == "https://hooks.example/gatehouse")
        let headers = Dictionary(request.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(headers["Content-Type"] == "application/cloudevents+json" && headers["Gatehouse-Event-Id"] == first.id && headers["Gatehouse-Delivery-Attempt"] == "2")
        // The signature is HMAC-SHA256 over "<t>.<body>" with the secret (as Stripe's).
        let signature = try #require(headers["Gatehouse-Signature"])
        let t = try #require(signature.split(separator: ",").first?.dropFirst(2))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(t).".utf8) + (request.body ?? Data()), using: SymmetricKey(data: Data(secret.utf8)))
        #expect(signature == "t=\(t),v1=" + mac.map { String(format: "%02x", $0) }.joined())
        #expect(Int(t) == Int(test.clock.now.timeIntervalSince1970))
        let cloudEvent = try #require(receiver.events.last)
        #expect(cloudEvent["specversion"] == "1.0" && cloudEvent["id"] == .string(first.id) && cloudEvent["type"] == "gatehouse.test.first")
        #expect(
            cloudEvent["source"] == .string(test.broker.config.server.issuer) && cloudEvent["subject"] == "alice" && cloudEvent["datacontenttype"] == "application/json")
        #expect(cloudEvent["data"]?.objectValue?["app"] == "web" && cloudEvent["time"]?.stringValue?.hasSuffix("Z") == true)

        // Events the app did not ask for are not sent.
        _ = try await audit("token.revoked", "alice")
        #expect(await events.runOnce() == 1)
        #expect(receiver.requests.withLock { $0.count } == 1)

        // alice's failing event holds her next one back; bob's goes on. After the last retry it is
        // a dead letter, and alice's next goes.
        let failing = try await audit("test.failing", "alice", "fail-me")
        let after = try await audit("test.after", "alice")
        _ = try await audit("test.bob", "bob")
        #expect(await events.runOnce() == 2)
        // (Different subjects go at once, in either order.)
        #expect(Set(receiver.events.suffix(2).compactMap { $0["type"]?.stringValue }) == ["gatehouse.test.failing", "gatehouse.test.bob"])
        test.clock.advance(by: 1)
        #expect(await events.runOnce() == 1)
        test.clock.advance(by: 2)
        // The third attempt fails: a dead letter; alice's next goes in the same run.
        #expect(await events.runOnce() == 2)
        #expect(receiver.events.last?["id"] == .string(after.id))
        let dead = try await test.broker.admin.deadLetters(id: "web")
        #expect(dead.map(\.eventID) == [failing.id] && dead.first?.attempts == 3 && dead.first?.lastError == "HTTP 503")
        #expect(try await test.store.auditEvents(type: "webhook.dead_letter", appID: "web", accountID: nil, since: nil, limit: 5).count == 1)

        // Replayed once the receiver is fixed: delivered, once.
        receiver.failing.withLock { $0 = false }
        try await test.broker.admin.replay(id: "web", delivery: try #require(dead.first?.id), by: admin)
        #expect(await events.runOnce() == 1)
        #expect(receiver.events.last?["id"] == .string(failing.id))
        test.clock.advance(by: 60)
        #expect(await events.runOnce() == 0)
        #expect(try await test.broker.admin.deadLetters(id: "web").isEmpty)

        // A real sign-in's event goes the same way.
        try await Self.application(test).test(.router) { client in
            let basic = "Basic " + Data("web:\(Self.webSecret)".utf8).base64EncodedString()
            _ = try await Self.register(client, app: "web", username: "carol", password: "correct horse battery", headers: [.authorization: basic])
        }
        #expect(await events.runOnce() >= 1)
        #expect(try await test.store.outboxItems(appID: "web", status: .pending, limit: 20).isEmpty)
        #expect(
            receiver.events.contains {
                $0["type"]?.stringValue?.hasPrefix("gatehouse.signin.") == true && $0["data"]?.objectValue?["details"]?.objectValue?["username"] == "carol"
            }, "\(receiver.events.suffix(3))")
    }
}
