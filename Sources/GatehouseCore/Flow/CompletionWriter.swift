import Foundation

/// The changes a provider that handed a flow over may make as the flow completes
/// (`FlowCompletion.changes`), made the engine's way: an installation retired with its keys' tokens
/// revoked by the `Revoker`, an identity linked through the store, audit events about the flow.
struct CompletionWriter: CompletionChanges {
    let engine: FlowEngine
    let flow: FlowRecord
    let accountID: String

    func retireInstallation(_ installationRef: String) async throws -> [String]? {
        guard let keyIDs = try await engine.store.removeInstallation(id: installationRef, accountID: accountID, now: engine.clock.now) else { return nil }
        try await engine.revoker.signInKeys(keyIDs)
        return keyIDs
    }

    func link(_ identity: ExternalIdentity) async throws -> Bool {
        try await engine.store.addIdentityLink(identity, accountID: accountID, now: engine.clock.now)
    }

    func audit(_ type: String, details: [String: String]) async throws {
        var event = engine.auditEvent(type, flow: flow, outcome: nil, details: details)
        event.accountID = accountID
        try await engine.store.appendAudit(event)
    }
}
