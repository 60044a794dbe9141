import Foundation

/// An HTTP endpoint a plugin instance offers under its own prefix, `/v1/plugins/<instance>/<path>`, or
/// at a path of the server's own it claims (`root`: the routes an invitation email links to)
/// (`EndpointOffering`). Declared, so that the server routes it and the broker checks the
/// caller and the body generically before the plugin sees anything: the broker names no plugin's
/// route.
public struct PluginEndpoint: Sendable {
    /// The HTTP methods an endpoint may answer.
    public enum Method: String, Sendable, Hashable, CaseIterable {
        /// The four methods.
        case get = "GET", post = "POST", patch = "PATCH", delete = "DELETE"
    }

    /// Who may call an endpoint, and how the broker proves it.
    package enum Caller: String, Sendable, Hashable {
        /// An app's back end, with its client credentials (HTTP Basic, or `client_id` and
        /// `client_secret` in the body): a confidential app whose policy lists the instance.
        case appClient
        /// A person, with an access token an app got for them in a stateful sign-in (Bearer, or DPoP
        /// for a bound token); the app's policy must list the instance.
        case accessToken
        /// An administrator, with an admin token (`Authorization: Bearer`).
        case admin
        /// Anyone: the path carries the credential (an invitation link's token), which the plugin
        /// checks. Root endpoints only.
        case anyone
    }

    /// What the endpoint reads and answers.
    package enum Format: String, Sendable, Hashable {
        /// A JSON object (for `GET` and `DELETE`, the query), answered with JSON; refusals are the
        /// broker's JSON errors.
        case json
        /// An HTML form (for `GET`, the query), answered with a page (`PluginPage`); refusals render
        /// the broker's error page. For `anyone` callers only (a browser brings no other credential).
        case page
    }

    /// The method it answers.
    public var method: Method
    /// The path under the instance's prefix (or, for `root`, the server's): one or more segments
    /// without a leading slash (`question`, `keys/rotate`), matched exactly; a segment `:name`
    /// matches any one segment, handed over in `PluginEndpointCall.parameters`.
    public var path: String
    /// A path of the server's own (`v1/activations`) instead of one under the instance's prefix, for an
    /// app's back end or anyone. Paths the broker serves itself are refused at start. Several instances
    /// of one type may claim the same path: an app's back end is answered by the first one its policy
    /// lists; for anyone, the broker asks them in turn and goes on while one answers `not_found`.
    public var root: Bool
    /// What it reads and answers: JSON (the default) or a page.
    package var format: Format
    /// What it does, for the API reference and `gatehouse providers`.
    public var summary: String
    /// Who may call it.
    package var caller: Caller
    /// The JSON body's fields (or, for `GET` and `DELETE`, the query's), checked like a challenge's
    /// answer: a field not declared, too long or of the wrong type is refused with its name (for
    /// `anyone`, whose links mail systems decorate, a field not declared is dropped instead).
    package var inputs: [ChallengeInput]
    /// Answers a call once the broker has proven the caller and checked the fields. Refusals are
    /// `BrokerError`s (4xx on the wire).
    public let handle: @Sendable (_ call: PluginEndpointCall) async throws -> PluginEndpointAnswer

    /// Any declaration, even one the typed constructors below cannot make (the broker's checks of
    /// declarations are tested with those).
    package init(
        _ method: Method, _ path: String, summary: String, caller: Caller, inputs: [ChallengeInput] = [], root: Bool = false, format: Format = .json,
        handle: @escaping @Sendable (PluginEndpointCall) async throws -> PluginEndpointAnswer = { _ in throw BrokerError(.notFound, .notFound, "Not served.") }
    ) {
        self.root = root
        self.format = format
        self.method = method
        self.path = path
        self.summary = summary
        self.caller = caller
        self.inputs = inputs
        self.handle = handle
    }

    /// An endpoint an app's back end calls with its client credentials (`appClient`): the handler
    /// gets the proven app.
    public static func forApps(
        _ method: Method, _ path: String, summary: String, inputs: [ChallengeElement] = [], root: Bool = false,
        handler: @escaping @Sendable (_ call: PluginEndpointCall, _ app: AppView) async throws -> PluginEndpointAnswer
    ) -> PluginEndpoint {
        PluginEndpoint(method, path, summary: summary, caller: .appClient, inputs: inputs.answerFields, root: root, format: .json) { call in
            guard let app = call.app else { throw BrokerError.internalFailure("The app calling \(path) was not proven.") }
            return try await handler(call, app)
        }
    }

    /// An endpoint a signed-in person's app calls with its access token (`accessToken`): the handler
    /// gets the account and the token's app.
    public static func forAccounts(
        _ method: Method, _ path: String, summary: String, inputs: [ChallengeElement] = [],
        handler: @escaping @Sendable (_ call: PluginEndpointCall, _ account: Account, _ app: AppView) async throws -> PluginEndpointAnswer
    ) -> PluginEndpoint {
        PluginEndpoint(method, path, summary: summary, caller: .accessToken, inputs: inputs.answerFields, root: false, format: .json) { call in
            guard let account = call.account, let app = call.app else { throw BrokerError.internalFailure("The account calling \(path) was not proven.") }
            return try await handler(call, account, app)
        }
    }

    /// An endpoint administrators call (`admin`): the handler gets the administrator's name.
    public static func forAdmins(
        _ method: Method, _ path: String, summary: String, inputs: [ChallengeElement] = [],
        handler: @escaping @Sendable (_ call: PluginEndpointCall, _ admin: String) async throws -> PluginEndpointAnswer
    ) -> PluginEndpoint {
        PluginEndpoint(method, path, summary: summary, caller: .admin, inputs: inputs.answerFields, root: false, format: .json) { call in
            guard let admin = call.admin else { throw BrokerError.internalFailure("The administrator calling \(path) was not proven.") }
            return try await handler(call, admin)
        }
    }

    /// A root endpoint anyone may call (`anyone`: a link in an email), reading a JSON object (for `GET`
    /// and `DELETE`, the query) and answering JSON; refusals are the broker's JSON errors.
    public static func forAnyone(
        _ method: Method, _ path: String, summary: String, inputs: [ChallengeElement] = [],
        handler: @escaping @Sendable (_ call: PluginEndpointCall) async throws -> PluginEndpointAnswer
    ) -> PluginEndpoint {
        PluginEndpoint(method, path, summary: summary, caller: .anyone, inputs: inputs.answerFields, root: true, format: .json, handle: handler)
    }

    /// A root page anyone may open (a link in an email): it reads an HTML form (for `GET`, the query)
    /// and answers a page (`PluginEndpointAnswer.page`); refusals render the broker's error page.
    public static func pageForAnyone(
        _ method: Method, _ path: String, summary: String, inputs: [ChallengeElement] = [],
        handler: @escaping @Sendable (_ call: PluginEndpointCall) async throws -> PluginEndpointAnswer
    ) -> PluginEndpoint {
        PluginEndpoint(method, path, summary: summary, caller: .anyone, inputs: inputs.answerFields, root: true, format: .page, handle: handler)
    }
}

/// One call of a plugin endpoint, with the caller as the broker proved it.
public struct PluginEndpointCall: Sendable {
    /// The endpoint called.
    public var endpoint: PluginEndpoint
    /// The body's (or query's) fields, checked against the declaration.
    public var fields: ChallengeResponse
    /// The values of the path's `:name` segments, by name.
    public var parameters: [String: String] = [:]
    /// The app: the calling back end's (`appClient`) or the one the access token was issued to
    /// (`accessToken`); nil for an administrator.
    public var app: AppView?
    /// The signed-in person (`accessToken`).
    public var account: Account?
    /// The device sign-in key the access token was issued through, if any.
    public var signInKey: SignInKey?
    /// The administrator's name (`admin`).
    public var admin: String?
    /// The caller's address, for rate limits and the audit log.
    public var clientIP: String?
    /// The language of the person calling (`TextTranslations.languages`: their browser's last
    /// sign-in's, else its `Accept-Language`), for the texts of a page the endpoint answers.
    public var language: String = "en"

    /// A call.
    public init(
        endpoint: PluginEndpoint, fields: ChallengeResponse, app: AppView? = nil, account: Account? = nil, signInKey: SignInKey? = nil, admin: String? = nil,
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
/// created), or for a page endpoint (`pageForAnyone`) a page.
public struct PluginEndpointAnswer: Sendable {
    /// The JSON body.
    public var body: JSONValue
    /// The HTTP status: 200 or 201.
    public var created: Bool
    /// The page a page endpoint answers.
    package var page: PluginPage?
    /// A document answered as it is, with its media type, instead of JSON.
    package var document: (body: Data, contentType: String)?

    /// An answer (201 when `created`).
    public init(_ body: JSONValue, created: Bool = false) {
        self.body = body
        self.created = created
    }

    /// A document a root endpoint anyone may call (`forAnyone`) answers as it is, under a CSP that runs
    /// nothing (a SAML service provider's metadata, which identity providers import by URL): `contentType` is `application/xml`, an `application/…+xml` type or
    /// `text/plain`; HTML and script types are refused (a plugin's markup goes through `page`).
    public static func document(_ body: Data, contentType: String) -> PluginEndpointAnswer {
        var answer = PluginEndpointAnswer(.null)
        answer.document = (body, contentType)
        return answer
    }

    /// Whether a document's media type may be served: XML or plain text, never a type a browser runs.
    package static func isServableDocumentType(_ contentType: String) -> Bool {
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if type == "application/xml" || type == "text/plain" { return true }
        guard type.hasPrefix("application/"), type.hasSuffix("+xml") else { return false }
        return !type.contains("html") && !type.contains("svg")
    }

    /// A page: one of the plugin's `pageTemplates`, rendered with `values` (an object whose fields
    /// Mustache reads; `false` or `null` hide a section) inside the broker's layout, every value
    /// escaped and no script run under the page's CSP. `status` is 200, or a 4xx when the page shows a
    /// refusal (a form to correct).
    public static func page(title: String, template: String, values: [String: JSONValue], status: Int = 200) -> PluginEndpointAnswer {
        var answer = PluginEndpointAnswer(.null)
        answer.page = PluginPage(title: title, template: template, values: values, status: status)
        return answer
    }
}

/// A page a plugin endpoint answers (`PluginEndpointAnswer.page`), as the server renders it.
package struct PluginPage: Sendable {
    /// The page's title.
    package var title: String
    /// The name of one of the plugin's `pageTemplates`.
    package var template: String
    /// What the template shows: an object whose fields Mustache reads (`false` or `null` hide a section).
    package var values: [String: JSONValue]
    /// The HTTP status: 200, or a 4xx when the page shows a refusal (a form to correct).
    package var status: Int

    /// A page.
    package init(title: String, template: String, values: [String: JSONValue], status: Int = 200) {
        self.title = title
        self.template = template
        self.values = values
        self.status = status
    }
}
