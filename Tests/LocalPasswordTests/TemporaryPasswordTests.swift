import Foundation
import GatehouseCore
import GatehouseTesting
import LocalPassword
import Testing

/// Users an administrator creates or resets: the account exists at once, and a temporary password
/// signs in only to choose the person's own, in every flow.
extension LocalPasswordTests {
    static let admin = AdminIdentity(name: "ops")

    func answer(_ test: TestBroker, _ flowID: String, _ answer: [String: JSONValue]) async throws -> FlowOutcome {
        try await test.engine.resume(flowID: flowID, answer: ChallengeResponse(answer), client: nil)
    }

    @Test func anAdministratorsNewUserHasAnAccountBeforeTheFirstSignIn() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let (user, generated) = try await test.broker.admin.createPasswordUser(
            providerID: nil, username: "Dora", choice: .init(password: "a long given password", mustChange: false), by: Self.admin, via: "test")
        #expect(generated == nil)
        #expect(user.username == "dora")
        #expect(user.identities.map(\.provider) == ["local"])
        #expect(try await test.broker.admin.users(matching: "dora", limit: 10, offset: 0).map(\.id) == [user.id])
        // The first sign-in lands in that account, not a new one.
        let signedIn = try await signIn(test, "dora", "a long given password")
        #expect(signedIn.account?.id == user.id)
        let types = try await test.broker.admin.audit(AuditQuery(accountID: user.id)).map(\.type)
        #expect(types.contains("account.created") && types.contains("user.added"))
        let added = try #require(try await test.broker.admin.audit(AuditQuery(type: "user.added")).first)
        #expect(added.details["admin"] == "ops")
        #expect(!added.details.values.contains { $0.contains("a long given password") })
    }

    @Test func aTemporaryPasswordOnlyLetsThePersonChooseTheirOwn() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let (user, generated) = try await test.broker.admin.createPasswordUser(
            providerID: "local", username: "erin", choice: .init(password: nil, mustChange: true), by: Self.admin, via: "test")
        let temporary = try #require(generated)
        #expect(temporary.count >= 20)
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "local"))
        // The right temporary password asks for a new one: no tokens yet.
        guard case .challenge(let flowID, let change, _) = try await answer(test, started.flowID, ["username": "erin", "password": .string(temporary)]) else {
            Issue.record("a temporary password must not complete the sign-in")
            return
        }
        #expect(change.type == "change_password")
        #expect(change.fields["passwordPolicy"]?.objectValue?["minLength"] == .number(10))
        // The same password again is refused, as is one the app's policy refuses; the flow stays.
        #expect(await errorCode { _ = try await answer(test, flowID, ["password": .string(temporary)]) } == "invalid_answer")
        #expect(await errorCode { _ = try await answer(test, flowID, ["password": "short"]) } == "password_too_short")
        guard case .completed(_, _, let account, _) = try await answer(test, flowID, ["password": "my very own password"]) else {
            Issue.record("the new password must complete the sign-in")
            return
        }
        #expect(account?.id == user.id)
        // From now on the new password signs in directly, and the temporary one no longer does.
        #expect(try await signIn(test, "erin", "my very own password").account?.id == user.id)
        #expect(await errorCode { _ = try await signIn(test, "erin", temporary) } == "invalid_credentials")
    }

    @Test func aTemporaryPasswordCannotSkipTheChangeThroughAnotherFlow() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        _ = try await test.broker.admin.createPasswordUser(
            providerID: "local", username: "frank", choice: .init(password: "given password 77", mustChange: true), by: Self.admin, via: "test")
        // Two flows proved the temporary password; the first to change it spends the other's proof.
        let first = try await test.start(FlowRequest(appID: "notes", providerID: "local"))
        let second = try await test.start(FlowRequest(appID: "notes", providerID: "local"))
        guard case .challenge(let one, _, _) = try await answer(test, first.flowID, ["username": "frank", "password": "given password 77"]),
            case .challenge(let two, _, _) = try await answer(test, second.flowID, ["username": "frank", "password": "given password 77"])
        else {
            Issue.record("both flows must ask for a new password")
            return
        }
        _ = try await answer(test, one, ["password": "my own new password"])
        #expect(await errorCode { _ = try await answer(test, two, ["password": "another own password"]) } == "flow_not_found")
        // Signing up anew with the temporary password is no way round either: the name is taken.
        #expect(await errorCode { _ = try await register(test, "frank", "given password 77") } == "username_taken")
    }

    @Test func aFlowThatProvedALeakedTemporaryPasswordCannotFinishAfterANewReset() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let (user, _) = try await test.broker.admin.createPasswordUser(
            providerID: "local", username: "ivan", choice: .init(password: "leaked given words 5", mustChange: true), by: Self.admin, via: "test")
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "local"))
        guard case .challenge(let waiting, _, _) = try await answer(test, started.flowID, ["username": "ivan", "password": "leaked given words 5"]) else {
            Issue.record("the temporary password must ask for a new one")
            return
        }
        // The admin learns of the leak and gives a new temporary password: the waiting flow is spent.
        _ = try await test.broker.admin.resetPassword(
            accountID: user.id, providerID: nil, choice: .init(password: "second given words 6", mustChange: true), by: Self.admin, via: "test")
        #expect(await errorCode { _ = try await answer(test, waiting, ["password": "the intruder's choice"]) } == "flow_not_found")
        #expect(await errorCode { _ = try await signIn(test, "ivan", "the intruder's choice") } == "invalid_credentials")
    }

    @Test func anAdministratorsResetEndsWhatTheOldPasswordOpened() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        let registered = try await register(test, "gina", "the first password 91")
        let accountID = try #require(registered.account?.id)
        let generated = try await test.broker.admin.resetPassword(
            accountID: accountID, providerID: nil, choice: .init(password: nil, mustChange: true), by: Self.admin, via: "test")
        let temporary = try #require(generated)
        #expect(await errorCode { _ = try await signIn(test, "gina", "the first password 91") } == "invalid_credentials")
        // The refresh token of the old sign-in is revoked.
        let refresh = try #require(registered.tokens.refreshToken)
        let refreshing = try TokenRequest(form: ["grant_type": "refresh_token", "refresh_token": refresh, "client_id": "notes"], basic: nil)
        #expect(await errorCode { _ = try await test.broker.oauth.token(refreshing) } == "invalid_grant")
        let started = try await test.start(FlowRequest(appID: "notes", providerID: "local"))
        guard case .challenge(_, let change, _) = try await answer(test, started.flowID, ["username": "gina", "password": .string(temporary)]) else {
            Issue.record("the reset password must be changed first")
            return
        }
        #expect(change.type == "change_password")
        let event = try #require(try await test.broker.admin.audit(AuditQuery(type: "password.reset_by_admin")).first)
        #expect(event.accountID == accountID && event.details["temporaryPassword"] == "true" && event.details["refreshTokensRevoked"] == "1")
    }

    @Test func aPasswordThePolicyRefusesIsRefusedAtCreationWithItsCode() async throws {
        let test = try await Self.broker()
        defer { test.temporary.remove() }
        #expect(
            await errorCode {
                _ = try await test.broker.admin.createPasswordUser(
                    providerID: nil, username: "hal", choice: .init(password: "short", mustChange: false), by: Self.admin, via: "test")
            } == "password_too_short")
        #expect(try await test.broker.admin.users(matching: "hal", limit: 10, offset: 0).isEmpty)
        #expect(
            await errorCode {
                _ = try await test.broker.admin.createPasswordUser(
                    providerID: "nope", username: "hal", choice: .init(password: nil, mustChange: true), by: Self.admin, via: "test")
            } == "invalid_request")
    }
}
