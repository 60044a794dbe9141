import Foundation

/// An app's webhook signing secrets as one sealed record (under the app's id in the outbox's
/// namespace), so that a rotation changes both with one compare-and-swap: the current secret, and
/// for a rotation's overlap the one it replaced. Two rotations at once cannot leave a secret signing
/// that neither of them meant to keep.
struct WebhookSecrets: Sendable, Hashable, Codable {
    var current: String
    var previous: String?
    var previousUntil: Date?

    /// The secrets that sign at `now`, the current one first.
    func signing(at now: Date) -> [Data] {
        var secrets = [Data(current.utf8)]
        if let previous, let until = previousUntil, now < until, previous != current { secrets.append(Data(previous.utf8)) }
        return secrets
    }

    /// Reads a stored record; a value that is not this JSON is a secret stored alone by an earlier
    /// version (which had no overlap).
    init(stored: Data) {
        if stored.first == UInt8(ascii: "{"), let record = try? JSONDecoder().decode(WebhookSecrets.self, from: stored) {
            self = record
        } else {
            self.init(current: String(decoding: stored, as: UTF8.self))
        }
    }

    init(current: String, previous: String? = nil, previousUntil: Date? = nil) {
        self.current = current
        self.previous = previous
        self.previousUntil = previousUntil
    }

    var stored: Data { (try? JSONEncoder().encode(self)) ?? Data(current.utf8) }
}
