import GatehousePluginKit
import GatehouseSupport
import HummingbirdBcrypt

/// Usernames and bcrypt hashes kept in the plugin's own storage: registration, sign-in, lockouts.
public enum PasswordBookPlugin: PluginFactory {
    public struct Config: Decodable, Sendable {
        /// bcrypt's cost: 12 in production, 4 in tests.
        public var cost: Int
    }
    public static let typeName = "guide-password"
    public static let challenges = [
        ChallengeDescription(
            type: "guide_password", summary: "A username and a password.",
            elements: [.text("username", label: "Username", autocomplete: "username", maxLength: 64), .secret("password", label: "Password", maxLength: 256)])
    ]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> some IdentityProvider {
        guard (4...16).contains(config.cost) else { throw ConfigIssue(path: "cost", "must be 4 to 16") }
        // An unknown username costs a bcrypt check too, so the time taken does not tell who exists.
        let decoy = Bcrypt.hash(RandomToken.make(), cost: UInt8(config.cost))
        return PasswordBook(id: id, cost: config.cost, decoy: decoy, environment: environment)
    }
}

/// One user: the subject the broker links to an account, and the password's hash.
struct StoredUser: Codable, Sendable {
    var subject: String
    var hash: String
}

struct PasswordBook: IdentityProvider, Forgetting {
    let id: String
    let cost: Int
    let decoy: String
    let environment: PluginEnvironment
    static let lockout = LockoutRule(
        maxFailures: 5, failureWindow: Seconds(900), lockoutDuration: Seconds(60), maxLockoutDuration: Seconds(3600), permanentAfterLockouts: nil
    )

    var traits: PluginTraits { PluginTraits(registration: .password) }

    func begin(in context: FlowContext) async throws -> FlowStep {
        .challenge(Challenge(type: "guide_password"))
    }

    func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let username = try answer.string("username").lowercased()
        let password = try answer.string("password")
        let valid = username.range(of: #"^[a-z0-9._@-]{1,64}$"#, options: .regularExpression) != nil
        let user: StoredUser
        if context.purpose == .register {
            guard valid else { throw BrokerError.invalidAnswer("A username has 1 to 64 letters, digits, or . _ @ -.") }
            user = try await register(username, password, rules: context.app.passwordPolicy)
        } else {
            // bcrypt reads 72 bytes at most: a longer password would match on its first 72 alone.
            guard valid, !password.isEmpty, password.utf8.count <= 72 else { throw BrokerError(.invalidCredentials, .failedAttempt, "Wrong username or password.") }
            user = try await signIn(username, password)
        }
        return .identified(ExternalIdentity(providerID: id, subject: user.subject, username: username, methods: ["pwd"]))
    }

    func register(_ username: String, _ password: String, rules: PasswordPolicy) async throws -> StoredUser {
        try rules.check(password, username: username)  // its length limit keeps within bcrypt's 72 bytes
        let hash = try await BlockingWork.run { [cost] in Bcrypt.hash(password, cost: UInt8(cost)) }
        let user = StoredUser(subject: RandomToken.make(), hash: hash)
        guard try await environment.storage.insert(user, key: "user:" + username) else {
            throw BrokerError(.alreadyRegistered, .conflict, "This username is taken.")
        }
        return user
    }

    func signIn(_ username: String, _ password: String) async throws -> StoredUser {
        try await environment.lockouts.guess("user:" + username, what: "This username", rule: Self.lockout) {
            let user = try await environment.storage.get(StoredUser.self, key: "user:" + username)?.value
            let right = try await BlockingWork.run { [decoy] in Bcrypt.verify(password, hash: user?.hash ?? decoy) }
            guard let user, right else { return .wrong(BrokerError(.invalidCredentials, .failedAttempt, "Wrong username or password.")) }
            return .right(user)
        }
    }

    /// A person deregistered: their password goes with the identity.
    func forget(_ departure: Departure) async throws -> [AdminChange] {
        guard case .identity(let subject) = departure else { return [] }
        for (key, user) in try await environment.storage.all(StoredUser.self, keyPrefix: "user:") where user.subject == subject {
            try await environment.storage.delete(key: key)
        }
        return []
    }
}
