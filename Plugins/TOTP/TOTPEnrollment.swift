import Foundation
import GatehousePluginKit

/// One account's authenticator app, as the store keeps it. The shared secret is sealed (AES-256-GCM
/// under a key of the instance, itself sealed under the key-encryption key, with the account id as
/// associated data), so a copy of the database does not reveal it; the recovery codes are keyed
/// digests. Every change is a compare-and-swap on the record's version, which is what makes a time
/// step usable once on every node.
struct TOTPEnrollment: Codable, Sendable {
    /// The shared secret, sealed (`TOTPBook.seal`).
    var sealedSecret: String
    var algorithm: OneTimePassword.Algorithm
    var digits: Int
    var period: Int
    /// The account's username when enrolled (for administrators' lists).
    var username: String
    var createdAt: Date
    /// The last time step a code was accepted for: only later steps are accepted after it.
    var lastUsedStep: UInt64?
    var lastUsedAt: Date?
    /// HMAC-SHA256 digests (hex) of the recovery codes not used yet.
    var recoveryCodes: [String]
    var recoveryCodesIssuedAt: Date
    /// Recovery codes used since they were issued.
    var recoveryCodesUsed: Int

    /// What the person and administrators may see: never the secret or the code digests.
    func summary(accountID: String) -> JSONValue {
        func time(_ date: Date) -> JSONValue { .string(ISO8601DateFormatter().string(from: date)) }
        return [
            "account": .string(accountID), "username": .string(username), "createdAt": time(createdAt), "lastUsedAt": lastUsedAt.map(time) ?? .null,
            "algorithm": .string(algorithm.rawValue), "digits": .number(Double(digits)), "period": .number(Double(period)),
            "recoveryCodesLeft": .number(Double(recoveryCodes.count)), "recoveryCodesUsed": .number(Double(recoveryCodesUsed)),
            "recoveryCodesIssuedAt": time(recoveryCodesIssuedAt),
        ]
    }
}
