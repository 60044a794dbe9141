import Foundation

/// Things a signed-in person does to their own credentials at a plugin (change
/// a PIN), outside any sign-in. The account API (`POST /v1/account/operations/{plugin}/{operation}`,
/// with an access token) reaches them generically: the core checks the token, that the token's app
/// may use the plugin and that the fields are the declared ones; the core names no operation. This is
/// one such operation, declared with its handler.
public struct AccountOperation: Sendable {
    /// The path segment, e.g. `change`.
    public var name: String
    /// What it does, for the API reference.
    public var summary: String
    /// The JSON fields it takes, checked like a challenge's answer before the plugin sees them.
    package var inputs: [ChallengeInput]
    /// Runs it. Refusals are `BrokerError`s; wrong secrets count like wrong answers in a flow (the
    /// plugin's own lockouts).
    public var run: @Sendable (_ fields: ChallengeResponse, _ context: AccountOperationContext) async throws -> JSONValue

    /// An operation.
    public init(
        name: String, summary: String, inputs: [ChallengeElement],
        run: @escaping @Sendable (_ fields: ChallengeResponse, _ context: AccountOperationContext) async throws -> JSONValue
    ) {
        self.name = name
        self.summary = summary
        self.inputs = inputs.answerFields
        self.run = run
    }
}

/// Who asks for an account operation, and through which app.
public struct AccountOperationContext: Sendable {
    /// The signed-in account.
    public var account: Account
    /// The app the access token was issued to.
    public var app: AppView
    /// The device sign-in key the access token was issued through, if any.
    public var signInKey: SignInKey?
    /// The caller's address.
    public var clientIP: String?
    /// When the person last really signed in (the token's `auth_time`, kept through refreshes); nil
    /// when the token does not say.
    public var authenticatedAt: Date?
    /// How they signed in (the token's `amr`).
    public var methods: [String]

    /// A context.
    public init(account: Account, app: AppView, signInKey: SignInKey? = nil, clientIP: String? = nil, authenticatedAt: Date? = nil, methods: [String] = []) {
        self.account = account
        self.app = app
        self.signInKey = signInKey
        self.clientIP = clientIP
        self.authenticatedAt = authenticatedAt
        self.methods = methods
    }

    /// Refuses unless the person signed in at most `maxAge` before `now` and, with `passing`, that
    /// sign-in passed that plugin instance (its id is in the token's `amr`): removing a second factor
    /// or showing new recovery codes needs a fresh sign-in with that very factor, not a token
    /// refreshed for days nor a password-only sign-in at an app that does not ask the factor. The
    /// refusal is RFC 9470's step-up challenge: 401 `insufficient_user_authentication` with
    /// `max_age`, so the app signs the person in again (`prompt=login`, and `acr_values` for a
    /// factor its policy does not always ask) and retries with the new token.
    public func requireSignIn(within maxAge: Seconds, now: Date, passing instance: String? = nil) throws(BrokerError) {
        let recent = authenticatedAt.map { now.timeIntervalSince($0) <= maxAge.timeInterval } ?? false
        let passed = instance.map { methods.contains($0) } ?? true
        guard recent, passed else {
            let what = instance.map { " that passed '\($0)'" } ?? ""
            var error = BrokerError(
                .insufficientUserAuthentication, .unauthenticated,
                "This needs a sign-in\(what) within the last \(maxAge.value) seconds; sign in again and retry with the new access token."
            )
            error.maxAge = maxAge.value
            throw error
        }
    }
}
