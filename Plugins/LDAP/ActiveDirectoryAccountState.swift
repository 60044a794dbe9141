import Foundation

/// What an Active Directory user entry says about whether the account may be used now, read again
/// at every refresh: AD refuses the bind of a disabled or expired account, but a refresh token
/// never binds.
struct ActiveDirectoryAccountState: Sendable, Equatable {
    /// The attributes it is read from, requested with every user entry.
    static let attributes = ["userAccountControl", "accountExpires"]

    /// `userAccountControl` has ACCOUNTDISABLE (0x2).
    var disabled: Bool
    /// When the account expires (`accountExpires`); nil for never (0 or the largest value).
    var expires: Date?

    init(_ entry: LDAPEntry) {
        let control = entry.first("userAccountControl").flatMap { Int64($0) } ?? 0
        disabled = control & 0x2 != 0
        expires = entry.first("accountExpires").flatMap { Int64($0) }.flatMap(Self.date)
    }

    /// An AD time (100 ns intervals since 1601-01-01 UTC) as a date; nil for "never".
    static func date(_ value: Int64) -> Date? {
        guard value > 0, value != Int64.max else { return nil }
        return Date(timeIntervalSince1970: Double(value) / 10_000_000 - 11_644_473_600)
    }

    /// Why the account may not be used at `now`, or nil.
    func refusal(at now: Date) -> ActiveDirectoryRestriction? {
        if disabled { return .accountDisabled }
        if let expires, expires <= now { return .accountExpired }
        return nil
    }
}
