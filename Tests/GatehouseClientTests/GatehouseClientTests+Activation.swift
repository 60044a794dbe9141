import Foundation
import GatehouseClient
import GatehouseTesting
import Testing

/// Activation's outcomes through the SDK (docs/activation.md, "Outcomes"): re-activation with an
/// override or a new activation, an installation that already holds the account's key, and a
/// temporary registration merged into the account of the installation that redeems it.
extension GatehouseClientTests {
    /// Activation data for `body` (an account or an address, and the activation PIN), issued by an administrator.
    func issueActivation(_ body: String) async throws -> String {
        let issued = try await world.broker.admin("POST", "/admin/v1/apps/mobile/activations", body)
        return try #require(issued.json["payload"]?.string, "\(issued)")
    }

    /// Answers an activation flow: the code and PIN, `choice` (with its extras) when the broker asks,
    /// the device key when it asks for one.
    func activationDelegate(_ payload: String, pin: String, choice: FlowAnswer? = nil) -> ScriptedDelegate {
        ScriptedDelegate { challenge, _ in
            switch challenge {
            case .activation: return .activation(code: payload, pin: pin)
            case .activationChoice:
                guard let choice else { throw GatehouseError.transport("no choice scripted") }
                return choice
            case .registerDeviceKey: return .registerDeviceKey()
            case .deviceKeyAssertion: return .signWithDeviceKey
            default: throw GatehouseError.transport(challenge.type)
            }
        }
    }

    @Test func reActivationEitherOverridesTheOtherInstallationOrHandsOutANewActivation() async throws {
        let (_, phone) = try await registeredPhone()
        let account = try #require(phone.account)
        let first = world.client("mobile")
        guard
            case .completed(let activated) = try await first.signIn(
                provider: "activation", delegate: activationDelegate(try await issueActivation(#"{"account": "\#(account.id)", "pin": "48027"}"#), pin: "48027"))
        else { Issue.record("not activated"); return }
        #expect(activated.activation?["outcome"] == "new")

        // A second installation: the account is active on the first, so the person chooses.
        let second = world.client("mobile")
        let newActivation = activationDelegate(
            try await issueActivation(#"{"account": "\#(account.id)", "pin": "48027"}"#), pin: "48027",
            choice: .activationChoice("new_activation", pin: "59183", alias: "Tablet")
        )
        let offered = try await second.signIn(provider: "activation", delegate: newActivation)
        guard case .stopped(let stopped) = offered else { Issue.record("not stopped: \(offered)"); return }
        #expect(newActivation.challengeTypes == ["activation", "activation_choice"])
        #expect(stopped["outcome"] == "re_activation" && stopped["choice"] == "new_activation")
        #expect(try await second.tokens() == nil, "a stopped flow signs nobody in")
        let additional = try #require(stopped["newActivation"]?["payload"]?.string, "\(stopped)")
        // The additional activation adds the installation next to the first.
        guard case .completed(let added) = try await second.signIn(provider: "activation", delegate: activationDelegate(additional, pin: "59183")) else {
            Issue.record("not added"); return
        }
        #expect(added.activation?["outcome"] == "new" && added.account?.id == account.id)
        #expect(try await first.renew().refreshToken != nil, "the first installation stays active")

        // A third installation overrides the others: their keys go, and their tokens with them.
        let third = world.client("mobile")
        let override = activationDelegate(
            try await issueActivation(#"{"account": "\#(account.id)", "pin": "48027"}"#), pin: "48027", choice: .activationChoice("override"))
        guard case .completed(let overriding) = try await third.signIn(provider: "activation", delegate: override) else { Issue.record("not completed"); return }
        #expect(override.challengeTypes == ["activation", "activation_choice", "register_key"])
        #expect(overriding.activation?["outcome"] == "re_activation" && overriding.activation?["choice"] == "override")
        #expect(overriding.activation?["overridden"]?.array?.isEmpty == false, "the person is told what was retired: \(String(describing: overriding.activation))")
        #expect(await thrownError(GatehouseError.self) { _ = try await first.renew() }?.code == "invalid_grant")
        #expect(await thrownError(GatehouseError.self) { _ = try await second.renew() }?.code == "invalid_grant")
        #expect(try await third.renew().refreshToken != nil)
    }

    @Test func anInstallationHoldingTheKeyStopsOrReEnrolsAndATemporaryRegistrationMergesIntoItsAccount() async throws {
        let (_, phone) = try await registeredPhone()
        let account = try #require(phone.account)
        let keys = SoftwareKeyStore()
        let client = world.client("mobile", keys: keys)
        guard
            case .completed(let activated) = try await client.signIn(
                provider: "activation", delegate: activationDelegate(try await issueActivation(#"{"account": "\#(account.id)", "pin": "48027"}"#), pin: "48027"))
        else { Issue.record("not activated"); return }
        let firstKey = try #require(try await client.deviceKey()).thumbprint

        // Activated again on the installation that already holds the account's key: stop changes nothing.
        let stop = activationDelegate(try await issueActivation(#"{"account": "\#(account.id)", "pin": "48027"}"#), pin: "48027", choice: .activationChoice("stop"))
        guard case .stopped(let stopped) = try await client.signIn(provider: "activation", delegate: stop) else { Issue.record("not stopped"); return }
        #expect(stopped["outcome"] == "already_activated" && stopped["choice"] == "stop")
        #expect(try await client.deviceKey()?.thumbprint == firstKey)

        // re_enrol registers the installation afresh: what its key got before is revoked.
        let reEnrol = activationDelegate(
            try await issueActivation(#"{"account": "\#(account.id)", "pin": "48027"}"#), pin: "48027", choice: .activationChoice("re_enrol"))
        guard case .completed(let reEnrolled) = try await client.signIn(provider: "activation", delegate: reEnrol) else { Issue.record("not re-enrolled"); return }
        #expect(reEnrol.challengeTypes == ["activation", "activation_choice", "register_key"])
        #expect(reEnrolled.activation?["outcome"] == "already_activated" && reEnrolled.activation?["choice"] == "re_enrol")
        let claims = try #require(Self.claims(of: reEnrolled.tokens.accessToken))
        #expect(claims["cnf"]?["jkt"]?.string == firstKey, "the installation keeps its key, and its new tokens are bound to it")
        let before = InMemoryTokenStore()
        try await before.save(activated.tokens)
        #expect(await thrownError(GatehouseError.self) { _ = try await world.client("mobile", keys: keys, tokens: before).renew() }?.code == "invalid_grant")
        #expect(try await client.renew().refreshToken != nil)

        // An address with no account gets a temporary registration; redeemed on this installation, it
        // merges into the installation's account once the installation's key signs in.
        let address = "merge-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let merge = activationDelegate(try await issueActivation(#"{"email": "\#(address)", "pin": "24680"}"#), pin: "24680", choice: .activationChoice("merge"))
        guard case .completed(let merged) = try await client.signIn(provider: "activation", delegate: merge) else { Issue.record("not merged"); return }
        #expect(merge.challengeTypes == ["activation", "activation_choice", "assertion"])
        #expect(merged.account?.id == account.id)
        #expect(merged.activation?["outcome"] == "merge" && merged.activation?["mergedAddress"]?.string == address)
    }
}
