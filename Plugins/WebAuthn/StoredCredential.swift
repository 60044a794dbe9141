import Foundation
import GatehousePluginKit

/// A registered credential as the store keeps it (`credential:<id>`, the id base64url): the public
/// key and what the ceremonies keep track of. Nothing secret: a public key, counters and flags.
struct StoredCredential: Codable, Sendable {
    /// The credential id, base64url.
    var id: String
    /// The user handle (base64url) the credential was made for: the identity's subject.
    var userHandle: String
    /// The COSE_Key, base64url.
    var publicKey: String
    var algorithm: String
    var signCount: UInt32
    /// The authenticator model's AAGUID, hex.
    var aaguid: String
    var backupEligible: Bool
    var backupState: Bool
    /// The format whose statement was verified at registration (`none`: no statement was).
    var attestationFormat: String
    var attestation: String
    /// Whether the attestation statement was verified at registration; nil for credentials stored
    /// before this was recorded (read from `attestationFormat`).
    var attestationVerified: Bool?
    var authenticatorDescription: String?
    /// The name the person gave it (or the model's), shown in lists.
    var name: String
    /// Whether it was registered as a discoverable passkey (identity provider) or as a second factor.
    var discoverable: Bool
    var createdAt: Date
    var lastUsedAt: Date?
    /// Assertions whose counter did not grow (recorded; refused unless `counterRegression: record`).
    var counterRegressions: Int
    /// Transports the authenticator reported (`usb`, `nfc`, `ble`, `internal`, `hybrid`), to hint clients.
    var transports: [String]
    /// Whether the authenticator verified the person (PIN, biometrics) at the last ceremony.
    var userVerifiedAtLastUse: Bool
    /// Whether its attestation was anchored in a trusted root when it was registered (only an
    /// instance with `attestation: direct` anchors); nil: not.
    var anchored: Bool?
    /// Set while the registration that made it has not completed (a passkey is linked to its account
    /// only then): the record expires at this time, so an abandoned one is purged; nil once it counts.
    var pendingUntil: Date?

    var publicKeyBytes: [UInt8] { Array(Base64URL.decode(publicKey) ?? Data()) }
    var handleBytes: [UInt8] { Array(Base64URL.decode(userHandle) ?? Data()) }

    /// What the person and administrators see (`account`: the owner, when known).
    func summary(account: String?) -> JSONValue {
        func time(_ date: Date?) -> JSONValue { date.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null }
        return [
            "credential": .string(id), "account": account.map(JSONValue.string) ?? .null, "name": .string(name), "createdAt": time(createdAt),
            "lastUsedAt": time(lastUsedAt), "backupEligible": .bool(backupEligible), "backupState": .bool(backupState), "algorithm": .string(algorithm),
            "aaguid": .string(aaguid), "authenticator": authenticatorDescription.map(JSONValue.string) ?? .null, "attestation": .string(attestationFormat),
            "attestationVerified": .bool(attestationVerified ?? (attestationFormat != "none")),
            "discoverable": .bool(discoverable), "transports": .array(transports.map(JSONValue.string)), "counterRegressions": .number(Double(counterRegressions)),
        ]
    }
}

/// The credentials of one user handle (`handle:<handle>`): their ids, and the account when the
/// credentials were made as a second factor (a passkey's account is its identity link's).
struct CredentialOwner: Codable, Sendable {
    var credentialIDs: [String]
    /// Set for a second factor's handle: the account it belongs to.
    var accountID: String?
    /// Set for passkeys a signed-in person added: the account the flow links the handle to when it
    /// completes (until then, they sign nobody in).
    var registeringFor: String?
    var username: String
    /// As `StoredCredential.pendingUntil`: the handle of an unfinished passkey registration expires.
    var pendingUntil: Date?
}

/// The handle a second factor's credentials were made under for an account (`account:<id>`).
struct AccountHandle: Codable, Sendable {
    var userHandle: String
}
