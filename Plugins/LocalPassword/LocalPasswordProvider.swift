import Foundation
import GatehousePluginKit
import GatehouseSupport
import HummingbirdBcrypt

/// Signs people in with a username and a password the broker keeps (bcrypt hashes in the plugin's
/// storage). Registration checks the app's password policy; the username must be free.
public struct LocalPasswordProvider: IdentityProvider, PasswordKeeping, TemporaryPasswords, DirectorySearching {
    public var traits: PluginTraits { PluginTraits(registration: .password) }
    public let id: String
    let cost: Int
    let environment: PluginEnvironment
    /// Compared against when the username is unknown, so that a miss costs as long as a hit and
    /// response times do not reveal which usernames exist. Computed in the background from the
    /// start: at cost 12 it takes a quarter of a second, which the server's start need not wait for.
    let decoyHash: Task<String, Never>

    init(id: String, cost: Int, environment: PluginEnvironment) {
        self.id = id
        self.cost = cost
        self.environment = environment
        self.decoyHash = Task {
            let password = RandomToken.make()
            // BlockingWork only throws what its body throws, and hashing does not.
            return (try? await BlockingWork.run { Bcrypt.hash(password, cost: UInt8(cost)) }) ?? ""
        }
    }

    /// One stored user.
    struct UserRecord: Codable, Sendable {
        var subject: String
        var username: String
        var passwordHash: String
        var createdAt: Date
        /// Set by an administrator's password: the next sign-in must choose a new one first.
        var mustChange: Bool?
    }

    /// The flow's state between a temporary password and the new one: who proved the temporary one.
    struct PasswordChange: Codable, Sendable {
        var subject: String
        /// The digest of the stored hash of the temporary password that was proven: an administrator's new reset
        /// meanwhile (a leaked one replaced) makes this flow's proof worthless.
        var provenHash: String
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(.credentials(for: id, in: context))
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        if context.hasState { return try await changeTemporaryPassword(answer, state: context.state(PasswordChange.self), in: context) }
        let username = try answer.string("username")
        let password = try answer.string("password")
        let record: UserRecord
        switch context.purpose {
        case .register:
            record = try await register(username: username, password: password, policy: context.app.passwordPolicy)
        case .authenticate:
            record = try await authenticate(username: username, password: password)
            // A password an administrator chose is good for one thing: choosing the person's own.
            if record.mustChange == true {
                return .challenge(
                    Self.changePasswordChallenge(policy: context.app.passwordPolicy, language: context.language),
                    state: PasswordChange(subject: record.subject, provenHash: SecretDigest.sha256Hex(record.passwordHash)))
            }
        }
        return .identified(identity(of: record))
    }

    private func identity(of record: UserRecord) -> ExternalIdentity {
        ExternalIdentity(
            providerID: id, subject: record.subject, username: record.username, claims: IdentityClaims(preferredUsername: record.username), methods: ["pwd"]
        )
    }

    /// The new password after a temporary one: the app's policy holds, and it must differ from the
    /// temporary one (which the administrator knows).
    private func changeTemporaryPassword(_ answer: ChallengeResponse, state: PasswordChange, in context: FlowContext) async throws -> FlowStep {
        let password = try answer.string("password")
        guard let username = try await environment.storage.get(String.self, key: Self.subjectKey(state.subject))?.value,
            let stored = try await environment.storage.get(UserRecord.self, key: Self.key(username)), stored.value.mustChange == true,
            SecretDigest.constantTimeEquals(SecretDigest.sha256Hex(stored.value.passwordHash), state.provenHash)
        else {
            // Removed, or changed in another flow meanwhile: this flow's proof is spent.
            throw BrokerError(.flowNotFound, .notFound, "The password was changed or the user removed meanwhile; sign in again.")
        }
        try context.app.passwordPolicy.check(password, username: username)
        let oldHash = stored.value.passwordHash
        if try await BlockingWork.run({ Bcrypt.verify(password, hash: oldHash) }) {
            throw BrokerError.invalidAnswer("Choose a password of your own, not the one you were given.")
        }
        let cost = UInt8(cost)
        var record = stored.value
        record.passwordHash = try await BlockingWork.run { Bcrypt.hash(password, cost: cost) }
        record.mustChange = nil
        guard try await environment.storage.replace(record, key: Self.key(username), version: stored.version) else {
            throw BrokerError(.flowConflict, .conflict, "The password was changed at the same moment; sign in again.")
        }
        return .identified(identity(of: record))
    }

    private func authenticate(username: String, password: String) async throws -> UserRecord {
        let refused = BrokerError(.invalidCredentials, .failedAttempt, "Wrong username or password.")
        let stored = try await environment.storage.get(UserRecord.self, key: Self.key(Self.normalize(username)))?.value
        // An empty password is refused, but only after the same work as any other attempt.
        // Both paths wait for the decoy (only in the first moments after a start is it not ready yet):
        // otherwise an unknown name would answer later than a known one until it is.
        let decoy = await decoyHash.value
        let hash = stored?.passwordHash ?? decoy
        let matches = try await BlockingWork.run { Bcrypt.verify(password, hash: hash) }
        guard let stored, matches, !password.isEmpty, password.utf8.count <= 72 else { throw refused }
        return stored
    }

    private func register(username rawUsername: String, password: String, policy: PasswordPolicy, mustChange: Bool = false) async throws -> UserRecord {
        let username = try Self.validUsername(rawUsername)
        try policy.check(password, username: username)
        let cost = UInt8(cost)
        let hash = try await BlockingWork.run { Bcrypt.hash(password, cost: cost) }
        let record = UserRecord(
            subject: UUID().uuidString.lowercased(), username: username, passwordHash: hash, createdAt: environment.clock.now, mustChange: mustChange ? true : nil)
        guard try await environment.storage.insert(record, key: Self.key(username)) else {
            throw BrokerError(.usernameTaken, .conflict, "This username is taken.")
        }
        // Index by subject, for rechecks and deregistration.
        _ = try await environment.storage.insert(username, key: Self.subjectKey(record.subject))
        return record
    }

    // MARK: - PasswordKeeping: users

    public func addUser(username: String, password: String, policy: PasswordPolicy) async throws -> String {
        try await register(username: username, password: password, policy: policy).subject
    }

    public func listUsers() async throws -> [ManagedUser] {
        try await environment.storage.all(UserRecord.self, keyPrefix: "user:").map {
            ManagedUser(subject: $0.value.subject, username: $0.value.username, createdAt: $0.value.createdAt)
        }
    }

    /// The users whose username contains `text`, without letter case, in username order.
    public func searchDirectory(_ text: String, limit: Int) async throws -> DirectorySearch {
        let matching = try await listUsers().filter { $0.username.range(of: text, options: [.caseInsensitive, .diacriticInsensitive]) != nil }
            .sorted { $0.username < $1.username }
        return DirectorySearch(
            people: matching.prefix(limit).map { DirectoryPerson(subject: $0.subject, username: $0.username) }, truncated: matching.count > limit)
    }

    public func removeUser(username: String) async throws -> String? {
        let key = Self.key(Self.normalize(username))
        guard let record = try await environment.storage.get(UserRecord.self, key: key)?.value else { return nil }
        // The subject's entry first: it is what `isStillValid` reads, so a removal cut short after
        // it still stops the user's refresh tokens.
        try await environment.storage.delete(key: Self.subjectKey(record.subject))
        try await environment.storage.delete(key: key)
        return record.subject
    }

    // MARK: - PasswordKeeping: resets

    public func subject(forUsername username: String) async throws -> String? {
        try await environment.storage.get(UserRecord.self, key: Self.key(Self.normalize(username)))?.value.subject
    }

    public func resetPassword(subject: String, to password: String, policy: PasswordPolicy) async throws {
        try await setPassword(subject: subject, to: password, policy: policy, mustChange: false)
    }

    // MARK: - TemporaryPasswords

    public func addUser(username: String, temporaryPassword: String, policy: PasswordPolicy) async throws -> String {
        try await register(username: username, password: temporaryPassword, policy: policy, mustChange: true).subject
    }

    public func resetPassword(subject: String, toTemporary password: String, policy: PasswordPolicy) async throws {
        try await setPassword(subject: subject, to: password, policy: policy, mustChange: true)
    }

    private func setPassword(subject: String, to password: String, policy: PasswordPolicy, mustChange: Bool) async throws {
        guard let username = try await environment.storage.get(String.self, key: Self.subjectKey(subject))?.value,
            let stored = try await environment.storage.get(UserRecord.self, key: Self.key(username))
        else { throw BrokerError(.notFound, .notFound, "The user no longer exists.") }
        try policy.check(password, username: username)
        let cost = UInt8(cost)
        let hash = try await BlockingWork.run { Bcrypt.hash(password, cost: cost) }
        var record = stored.value
        record.passwordHash = hash
        record.mustChange = mustChange ? true : nil
        guard try await environment.storage.replace(record, key: Self.key(username), version: stored.version) else {
            throw BrokerError(.flowConflict, .conflict, "The password was changed at the same moment; try again.")
        }
    }

    // MARK: - Rechecks and forgetting

    /// A user removed by an administrator stops refreshing tokens.
    public func recheck(subject: String) async throws -> IdentityRecheck {
        try await isStillValid(subject: subject) ? .valid(freshClaims: nil) : .refused(reason: "identity_refused")
    }

    /// Whether the user still exists. Asked at every refresh, so one read: the subject's entry, which
    /// removal deletes first.
    public func isStillValid(subject: String) async throws -> Bool {
        try await environment.storage.get(String.self, key: Self.subjectKey(subject)) != nil
    }

    /// Deregistration: the password hash goes with the account.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        if case .identity(let subject) = departure, let found = try await record(subject: subject) {
            _ = try await removeUser(username: found.username)
        }
        return []
    }

    private func record(subject: String) async throws -> UserRecord? {
        guard let username = try await environment.storage.get(String.self, key: Self.subjectKey(subject))?.value else { return nil }
        return try await environment.storage.get(UserRecord.self, key: Self.key(username))?.value
    }

    // MARK: - Usernames

    static func key(_ username: String) -> String { "user:\(username)" }
    static func subjectKey(_ subject: String) -> String { "subject:\(subject)" }

    static func normalize(_ username: String) -> String {
        username.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// Usernames are case-insensitive: 1-64 characters of letters, digits and `.`, `_`, `-`, `@`, `+`.
    static func validUsername(_ raw: String) throws(BrokerError) -> String {
        let username = normalize(raw)
        guard (1...64).contains(username.count),
            username.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || "._-@+".contains($0) })
        else {
            throw BrokerError(.invalidUsername, .badRequest, "A username has 1-64 characters: letters, digits, '.', '_', '-', '@' or '+'.")
        }
        return username
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension LocalPasswordProvider: Forgetting {}
extension LocalPasswordProvider: Rechecking {}

extension LocalPasswordProvider {
    /// After a temporary password: the person chooses their own (the app's password rules shown).
    static let changePassword = ChallengeDescription(
        type: "change_password",
        summary: "The password was set by an administrator: answer with a new `password` of the person's own (the app's `passwordPolicy` applies).",
        title: "Choose a new password", prompt: "Your password was set by an administrator. Choose your own to continue. {rules}",
        submitLabel: "Change password",
        elements: [
            .secret("password", label: "New password", autocomplete: "new-password", elementID: "password"),
            .detail("passwordPolicy", .object, "`minLength` and `maxLength` of the app's password policy."),
            .detail("rules", .string, "The password rules, in words."),
        ])

    static func changePasswordChallenge(policy: PasswordPolicy, language: String) -> Challenge {
        Challenge(
            type: changePassword.type,
            fields: [
                "passwordPolicy": ["minLength": .number(Double(policy.minLength)), "maxLength": .number(Double(policy.maxLength))],
                "rules": .string(policy.rules(in: language).joined(separator: " ")),
            ])
    }
}
