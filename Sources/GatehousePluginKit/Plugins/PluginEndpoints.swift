import Foundation

/// An HTTP endpoint a plugin instance offers under its own prefix, `/v1/plugins/<instance>/<path>`
/// (`GatehousePlugin.endpoints`). Declared, so that the server routes it and the broker checks the
/// caller and the body generically before the plugin sees anything: the broker names no plugin's
/// route.
public struct PluginEndpoint: Sendable, Hashable {
    /// The HTTP methods an endpoint may answer.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        /// The four methods.
        case get = "GET", post = "POST", patch = "PATCH", delete = "DELETE"
    }

    /// Who may call an endpoint, and how the broker proves it.
    public enum Caller: String, Sendable, Hashable {
        /// An app's back end, with its client credentials (HTTP Basic, or `client_id` and
        /// `client_secret` in the body): a confidential app whose policy lists the instance.
        case appClient
        /// A person, with an access token an app got for them in a stateful sign-in (Bearer, or DPoP
        /// for a bound token); the app's policy must list the instance.
        case accessToken
        /// An administrator, with an admin token (`Authorization: Bearer`).
        case admin
    }

    /// The method it answers.
    public var method: Method
    /// The path under the instance's prefix: one or more segments without a leading slash (`question`,
    /// `keys/rotate`), matched exactly.
    public var path: String
    /// What it does, for the API reference and `gatehouse providers`.
    public var summary: String
    /// Who may call it.
    public var caller: Caller
    /// The JSON body's fields (or, for `GET` and `DELETE`, the query's), checked like a challenge's
    /// answer: a field not declared, too long or of the wrong type is refused with its name.
    public var inputs: [ChallengeInput]

    /// An endpoint.
    public init(_ method: Method, _ path: String, summary: String, caller: Caller, inputs: [ChallengeInput] = []) {
        self.method = method
        self.path = path
        self.summary = summary
        self.caller = caller
        self.inputs = inputs
    }
}

/// One call of a plugin endpoint, with the caller as the broker proved it.
public struct PluginEndpointCall: Sendable {
    /// The endpoint called.
    public var endpoint: PluginEndpoint
    /// The body's (or query's) fields, checked against the declaration.
    public var fields: ChallengeResponse
    /// The app: the calling back end's (`appClient`) or the one the access token was issued to
    /// (`accessToken`); nil for an administrator.
    public var app: App?
    /// The signed-in person (`accessToken`).
    public var account: Account?
    /// The device sign-in key the access token was issued through, if any.
    public var signInKey: SignInKey?
    /// The administrator's name (`admin`).
    public var admin: String?
    /// The caller's address, for rate limits and the audit log.
    public var clientIP: String?

    /// A call.
    public init(
        endpoint: PluginEndpoint, fields: ChallengeResponse, app: App? = nil, account: Account? = nil, signInKey: SignInKey? = nil, admin: String? = nil,
        clientIP: String? = nil
    ) {
        self.endpoint = endpoint
        self.fields = fields
        self.app = app
        self.account = account
        self.signInKey = signInKey
        self.admin = admin
        self.clientIP = clientIP
    }
}

/// What a plugin endpoint answers: a JSON body, with its status (200 by default; 201 for something
/// created).
public struct PluginEndpointAnswer: Sendable {
    /// The JSON body.
    public var body: JSONValue
    /// The HTTP status: 200 or 201.
    public var created: Bool

    /// An answer (201 when `created`).
    public init(_ body: JSONValue, created: Bool = false) {
        self.body = body
        self.created = created
    }
}
