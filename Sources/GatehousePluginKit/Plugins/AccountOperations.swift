/// Things a signed-in person does to their own credentials at a plugin (change
/// a PIN), outside any sign-in. The account API (`POST /v1/account/operations/{plugin}/{operation}`,
/// with an access token) reaches them generically: the core checks the token, that the token's app
/// may use the plugin and that the fields are the declared ones; the core names no operation. This is one such operation.
public struct AccountOperation: Sendable, Hashable {
    /// The path segment, e.g. `change`.
    public var name: String
    public var summary: String
    /// The JSON fields it takes, checked like a challenge's answer before the plugin sees them.
    public var inputs: [ChallengeInput]

    public init(name: String, summary: String, inputs: [ChallengeInput]) {
        self.name = name
        self.summary = summary
        self.inputs = inputs
    }
}

/// Who asks for an account operation, and through which app.
public struct AccountOperationContext: Sendable {
    public var account: Account
    public var app: App
    /// The device sign-in key the access token was issued through, if any.
    public var signInKey: SignInKey?
    public var clientIP: String?

    public init(account: Account, app: App, signInKey: SignInKey? = nil, clientIP: String? = nil) {
        self.account = account
        self.app = app
        self.signInKey = signInKey
        self.clientIP = clientIP
    }
}
