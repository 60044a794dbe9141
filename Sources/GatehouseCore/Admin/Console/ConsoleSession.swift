import Foundation

/// A person signed in to the admin console: who, through which broker session, since when, and the
/// CSRF token every console form carries. Stored by the digest of its cookie (in the core's
/// `gatehouse:console-sessions` slice of plugin storage), so every node knows it and signing out
/// ends it everywhere.
public struct ConsoleSession: Sendable, Hashable, Codable {
    public var accountID: String
    public var username: String
    /// The broker's single sign-on session the console's ID token named (`sid`): when it ends, so
    /// does this.
    public var sessionID: String?
    /// When the person last proved who they are (the ID token's `auth_time`).
    public var authTime: Date
    /// How the person is admitted: `role`, `group:<name>`, or nil while only the first-admin
    /// bootstrap is open to them.
    public var admittedBy: String?
    public var csrfToken: String
    /// How the person signed in (the ID token's `amr`: methods and the provider instances passed);
    /// the account page asks a credential's own provider among them before removing it.
    public var methods: [String]?
    /// Kept for RP-initiated logout (`id_token_hint`) when the person signs out.
    public var idToken: String
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date

    public var isAdmitted: Bool { admittedBy != nil }

    /// The name changes are audited under.
    public var admin: AdminIdentity { AdminIdentity(name: username, accountID: accountID) }
}

/// A console sign-in on its way through the broker's authorization endpoint: what the callback
/// needs to finish it (state, nonce, PKCE verifier) and where the person was going.
struct ConsoleSignInAttempt: Sendable, Codable {
    var state: String
    var nonce: String
    var codeVerifier: String
    var returnTo: String
    var reauthentication: Bool
    var expiresAt: Date
}

/// What an admin typed into a console form whose session had ended before it was saved: kept sealed
/// in a cookie (never stored), so that after signing in again the form comes back filled in, unsaved.
public struct ConsoleDraft: Sendable, Codable {
    /// The form's action path (`/admin/apps/notes/policy`).
    public var path: String
    /// The posted fields, without the CSRF token.
    public var fields: [String: String]
    public var expiresAt: Date
}
