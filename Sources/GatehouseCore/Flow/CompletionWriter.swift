import Foundation

/// The changes a provider that handed a flow over may make as the flow completes
/// (`FlowCompletion.changes`), made the engine's way: an installation retired with its keys' tokens
/// revoked by the `Revoker`, an address linked under the provider's enrolled-address id (never an
/// identity that signs in), audit events about the flow.
struct CompletionWriter: CompletionChanges {
    let engine: FlowEngine
    let flow: FlowRecord
    let accountID: String
    /// The provider that handed the flow over.
    let providerID: String

    func retireInstallation(_ installationRef: String) async throws -> [String]? {
        guard let keyIDs = try await engine.store.removeInstallation(id: installationRef, accountID: accountID, now: engine.clock.now) else { return nil }
        try await engine.revoker.signInKeys(keyIDs)
        return keyIDs
    }

    func linkAddress(_ address: EmailAddress, verified: Bool) async throws -> Bool {
        let identity = ExternalIdentity(
            providerID: IdentityLink.enrolledAddressProvider(providerID), subject: address.value, username: address.value,
            claims: IdentityClaims(email: address.value, emailVerified: verified)
        )
        return try await engine.store.addIdentityLink(identity, accountID: accountID, now: engine.clock.now)
    }

    func audit(_ type: String, details: [String: String]) async throws {
        var event = engine.auditEvent(type, flow: flow, outcome: nil, details: details)
        event.accountID = accountID
        try await engine.store.appendAudit(event)
    }
}
