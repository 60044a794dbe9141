import Foundation

/// An identity provider that keeps passwords itself: administrators manage its users (the
/// `gatehouse users` command), and a person who forgot their password sets a new one once the engine
/// has proven them with a code sent to the account's verified address ("Forgot password").
public protocol PasswordKeeping: IdentityProvider {
    /// Adds a user; the password is checked against `policy`. Returns the new identity's subject.
    func addUser(username: String, password: String, policy: PasswordPolicy) async throws -> String
    /// Every user it keeps.
    func listUsers() async throws -> [ManagedUser]
    /// Removes a user's credentials; returns the subject that was removed, or nil if there was none.
    func removeUser(username: String) async throws -> String?
    /// The subject of the user signing in as `username`; nil when there is none.
    func subject(forUsername username: String) async throws -> String?
    /// Replaces the user's password; `policy`'s refusals are thrown as they are at registration.
    func resetPassword(subject: String, to password: String, policy: PasswordPolicy) async throws
}

/// A user as a password-keeping provider lists it.
public struct ManagedUser: Sendable, Hashable, Codable {
    /// The identity's subject.
    public var subject: String
    /// The username.
    public var username: String
    /// When it was added.
    public var createdAt: Date

    /// A user.
    public init(subject: String, username: String, createdAt: Date) {
        self.subject = subject
        self.username = username
        self.createdAt = createdAt
    }
}

/// A password an administrator set (a new user's first, or a reset) that the person must replace at
/// their next sign-in, before any token is issued. A password keeper that can hold such a password
/// adopts this too; the broker offers "must change" only for those.
public protocol TemporaryPasswords: PasswordKeeping {
    /// Adds a user whose password must be changed at the first sign-in. Returns the subject.
    func addUser(username: String, temporaryPassword: String, policy: PasswordPolicy) async throws -> String
    /// Replaces the user's password with one that must be changed at the next sign-in.
    func resetPassword(subject: String, toTemporary password: String, policy: PasswordPolicy) async throws
}
