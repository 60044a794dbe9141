import Foundation
import GatehousePluginKit

/// One audit event: who did what, when, with which outcome. Never holds a secret.
public struct AuditEvent: Sendable, Hashable, Codable {
    /// A unique id.
    public var id: String
    /// When it happened.
    public var time: Date
    /// e.g. `signin.success`, `signin.failure`, `account.created`.
    public var type: String
    /// The app it happened at.
    public var appID: String?
    /// The account it is about.
    public var accountID: String?
    /// The provider instance involved.
    public var providerID: String?
    /// A machine code for failures (`invalid_credentials`, ...).
    public var outcome: String?
    /// What else is worth knowing (never a secret).
    public var details: [String: String]

    /// An event.
    public init(
        id: String = UUID().uuidString, time: Date, type: String, appID: String? = nil, accountID: String? = nil, providerID: String? = nil, outcome: String? = nil,
        details: [String: String] = [:]
    ) {
        self.id = id
        self.time = time
        self.type = type
        self.appID = appID
        self.accountID = accountID
        self.providerID = providerID
        self.outcome = outcome
        self.details = details
    }
}
