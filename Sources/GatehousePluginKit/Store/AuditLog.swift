import Foundation

/// The append-only audit log, as plugins write to it (`PluginEnvironment.audit`): appending only, and
/// only as the instance itself (the broker stamps each event with the instance's id and the time).
public struct AuditLog: Sendable {
    /// What the broker writes for one event: its type, app, account, outcome and details.
    package typealias Write = @Sendable (_ type: String, _ appID: String?, _ accountID: String?, _ outcome: String?, _ details: [String: String]) async throws -> Void

    private let write: Write

    /// A log appending through `write` (the broker's store, under the instance's id).
    package init(append write: @escaping Write) { self.write = write }

    /// Appends an event of this instance: `type` (`activation.issued`), the app and account it concerns,
    /// its outcome (an error code) and details. Events are never changed or removed.
    public func append(_ type: String, appID: String? = nil, accountID: String? = nil, outcome: String? = nil, details: [String: String] = [:]) async throws {
        try await write(type, appID, accountID, outcome, details)
    }
}
