import Crypto
import Foundation
import GatehouseCore
import GatehousePlugins
import GatehouseTesting
import Testing

/// What goes when an account goes: an account holding one credential of each kind the plugins keep
/// (an authenticator app and its recovery codes, a PIN, a finished passkey and an abandoned one) is
/// deleted, and nothing of it is left in any table but the audit; an abandoned passkey registration is
/// purged with the other expired records.
extension GatehouseServerTests {
    static let departureYAML = """
        providers:
          - id: name
            type: name
          - id: app-code
            type: totp
          - id: pin
            type: pin
            config: {hashCost: 4}
          - id: passkeys
            type: webauthn
            config:
              rpID: login.example.test
              origins: [https://login.example.test]
        apps:
          - id: bank
            policy: {identityProviders: [name], authenticators: [app-code], secondFactor: app-code, selfRegistration: true}
          - id: vault
            policy: {identityProviders: [name], authenticators: [pin], secondFactor: pin, selfRegistration: true, pinPolicy: {minLength: 5}}
          - id: web
            policy: {identityProviders: [passkeys, name], selfRegistration: true}
          - id: strict
            policy: {identityProviders: [passkeys], authenticators: [pin], secondFactor: pin, selfRegistration: true}
        """

    static func departureBroker() async throws -> TestBroker {
        var registry = BuiltInPlugins.registry
        registry.register(NamePlugin.self)
        return try await TestBroker.make(yaml: departureYAML, registry: registry)
    }

    /// RFC 6238 with SHA-1, 6 digits, 30 s: an authenticator app's code.
    static func totp(_ secret: [UInt8], at date: Date) -> String {
        var counter = UInt64(date.timeIntervalSince1970 / 30).bigEndian
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: Data(bytes: &counter, count: 8), using: SymmetricKey(data: secret)))
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])) % 1_000_000
        return String(format: "%06d", value)
    }

    static func base32Decode(_ text: String) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, value = 0
        var bytes: [UInt8] = []
        for character in text.uppercased() {
            guard let index = alphabet.firstIndex(of: character) else { continue }
            value = value << 5 | index
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8(value >> (bits - 8) & 0xff))
                bits -= 8
            }
        }
        return bytes
    }

    /// Every row of every table but the audit's (history names the account by design), as text.
    static func rowsOutsideTheAudit(_ path: String) async -> String {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('audit_events', 'event_outbox')"):
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    print(table, [value.decode('utf-8', 'replace') if isinstance(value, bytes) else value for value in row])
            """
        return await ChildProcess.run(["python3", "-c", script, path]).output
    }

    @Test func aDeletedAccountLeavesNothingOfItsCredentialsInAnyTable() async throws {
        let test = try await Self.departureBroker()
        defer { test.temporary.remove() }
        let engine = test.engine
        // An authenticator app, with its recovery codes.
        let (bank, _) = try await test.start(FlowRequest(appID: "bank", providerID: "name", purpose: .register))
        guard case .challenge(_, let setup, _) = try await engine.resume(flowID: bank, answer: ChallengeResponse(["name": "ada"]), client: nil) else {
            Issue.record("no totp setup")
            return
        }
        let uri = try #require(setup.fields["otpauthURI"]?.stringValue)
        let secret = Self.base32Decode(try #require(URLComponents(string: uri)?.queryItems?.first { $0.name == "secret" }?.value))
        _ = try await engine.resume(flowID: bank, answer: ChallengeResponse(["code": .string(Self.totp(secret, at: test.clock.now))]), client: nil)
        let (_, signedUp) = try await test.finish(bank, answer: [:])
        let ada = try #require(signedUp)
        // A PIN.
        let (vault, _) = try await test.start(FlowRequest(appID: "vault", providerID: "name"))
        _ = try await engine.resume(flowID: vault, answer: ChallengeResponse(["name": "ada"]), client: nil)
        _ = try await test.finish(vault, answer: ["pin": "27193"])
        // A passkey added and kept, and one whose registration stopped at the PIN and was abandoned.
        let phone = SoftAuthenticator(), laptop = SoftAuthenticator()
        let (added, create) = try await test.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register, signedInAccountID: ada.id))
        _ = try await test.finish(added, answer: ["credential": phone.create(try #require(create.fields["publicKey"]), origin: "https://login.example.test")])
        let (abandoned, again) = try await test.start(FlowRequest(appID: "strict", providerID: "passkeys", purpose: .register, signedInAccountID: ada.id))
        let waiting = try await engine.resume(
            flowID: abandoned, answer: ChallengeResponse(["credential": laptop.create(try #require(again.fields["publicKey"]), origin: "https://login.example.test")]),
            client: nil
        )
        guard case .challenge(_, let pin, _) = waiting, pin.type == "pin" else { Issue.record("no PIN asked: \(waiting)"); return }
        let handles = phone.credentials.map(\.userHandle) + laptop.credentials.map(\.userHandle)
        let before = await Self.rowsOutsideTheAudit(test.temporary.path)
        #expect(before.contains(ada.id) && handles.allSatisfy { before.contains($0) }, "the account's credentials are stored")

        #expect(try await test.broker.oauth.deleteAccount(id: ada.id, appID: nil, admin: Self.ops))
        // Only the revocation of the subject's outstanding access tokens names it, until they expire.
        let after = await Self.rowsOutsideTheAudit(test.temporary.path).split(separator: "\n").filter { !$0.hasPrefix("revocations ['subject'") }.joined(separator: "\n")
        #expect(!after.isEmpty, "the tables were read")
        for trace in [ada.id] + handles + phone.credentials.map { Base64URL.encode(bytes: $0.id) } + laptop.credentials.map { Base64URL.encode(bytes: $0.id) } {
            #expect(!after.contains(trace), "\(trace) is left: \(after.split(separator: "\n").filter { $0.contains(trace) })")
        }
    }

    /// A passkey made in a registration that never completed expires with the other expired records
    /// (two days on, longer than any flow lives); a finished one is kept.
    @Test func anAbandonedPasskeyRegistrationIsPurgedAndAFinishedOneKept() async throws {
        let test = try await Self.departureBroker()
        defer { test.temporary.remove() }
        let phone = SoftAuthenticator(), laptop = SoftAuthenticator()
        let (kept, create) = try await test.start(FlowRequest(appID: "web", providerID: "passkeys", purpose: .register))
        guard case .challenge(_, let options, _) = try await test.engine.resume(flowID: kept, answer: ChallengeResponse(["username": "ada"]), client: nil) else { return }
        let (_, ada) = try await test.finish(kept, answer: ["credential": phone.create(try #require(options.fields["publicKey"]), origin: "https://login.example.test")])
        #expect(create.type == "webauthn_username" && ada != nil)
        let (abandoned, asked) = try await test.start(FlowRequest(appID: "strict", providerID: "passkeys", purpose: .register))
        guard case .challenge(_, let laptopOptions, _) = try await test.engine.resume(flowID: abandoned, answer: ChallengeResponse(["username": "bo"]), client: nil)
        else { return }
        #expect(asked.type == "webauthn_username")
        _ = try await test.engine.resume(
            flowID: abandoned,
            answer: ChallengeResponse(["credential": laptop.create(try #require(laptopOptions.fields["publicKey"]), origin: "https://login.example.test")]), client: nil
        )
        func stored() async throws -> [String] { try await test.store.pluginRecords(namespace: "passkeys", keyPrefix: "", now: test.clock.now).map(\.key) }
        #expect(try await stored().count == 4, "two credentials and two handles")
        test.clock.advance(by: 2 * 86_400 + 1)
        _ = try await test.broker.purgeExpired()
        let left = try await stored()
        #expect(left.count == 2 && left.contains("credential:\(Base64URL.encode(bytes: phone.credentials[0].id))"), "\(left)")
        #expect(try await test.store.auditEvents(type: "webauthn.registered", appID: "web", accountID: ada?.id, since: nil, limit: 5).count == 1)
    }
}
