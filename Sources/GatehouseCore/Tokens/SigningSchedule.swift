import Foundation

/// Which stored key signs, per algorithm, at a given time: the rule the keyring signs by and
/// `gatehouse keys list` reports. Each key signs from its `activatesAt` (or creation) until it is
/// retired; of the keys whose window holds the time, the newest wins.
public struct SigningSchedule: Sendable {
    private struct Signer: Sendable {
        var kid: String
        var from: Date
        var until: Date?
    }

    /// Per algorithm, the keys that may sign, newest start first.
    private let signers: [SigningAlgorithm: [Signer]]

    public init(_ records: [SigningKeyRecord]) {
        var signers: [SigningAlgorithm: [Signer]] = [:]
        for algorithm in SigningAlgorithm.allCases {
            signers[algorithm] = records.filter { $0.algorithm == algorithm }
                .map { Signer(kid: $0.kid, from: $0.activatesAt ?? $0.createdAt, until: $0.retiredAt) }
                // Retired before it ever signed: never signs.
                .filter { signer in signer.until.map { signer.from < $0 } ?? true }
                .sorted { ($0.from, $0.kid) > ($1.from, $1.kid) }
        }
        self.signers = signers
    }

    /// The key whose window holds `now`; when none does but a rotated-in key is waiting (its
    /// predecessors gone), the one that starts soonest: it has been published since its rotation,
    /// which is better than a key made on the spot.
    public func activeKid(_ algorithm: SigningAlgorithm, at now: Date) -> String? {
        guard let candidates = signers[algorithm] else { return nil }
        return candidates.first { $0.from <= now && ($0.until.map { now < $0 } ?? true) }?.kid
            ?? candidates.last { $0.from > now && $0.until == nil }?.kid
    }

    /// The signing key of every algorithm that has one at `now`.
    public func activeKids(at now: Date) -> [SigningAlgorithm: String] {
        var kids: [SigningAlgorithm: String] = [:]
        for algorithm in SigningAlgorithm.allCases { kids[algorithm] = activeKid(algorithm, at: now) }
        return kids
    }
}
