import Foundation
import GatehouseCore
import HTTPTypes
import Hummingbird

/// `POST /v1/flows` and `POST /v1/flows/{flow}`: the JSON flow API native apps drive. The handlers only
/// translate between HTTP and the flow engine.
struct FlowAPI {
    let broker: Broker
    /// Every text in every language, for challenge texts and refusals.
    let catalog: MessageCatalog
    var engine: FlowEngine { broker.engine }

    init(broker: Broker) {
        self.broker = broker
        self.catalog = MessageCatalog(plugins: broker.engine.challenges.translations)
    }
    var issuer: String { broker.config.server.issuer }

    func addRoutes(to group: RouterGroup<GatehouseRequestContext>) {
        group.post("flows", use: start)
        group.post("flows/:flow", use: resume)
    }

    /// The body of `POST /v1/flows`.
    struct StartBody: Decodable {
        var app: String
        var provider: String
        var purpose: FlowPurpose?
        var stateless: Bool?
        var scope: String?
        var clientSecret: String?
        /// For providers that sign in through a browser: where the browser returns, and the PKCE challenge.
        var returnURI: String?
        var codeChallenge: String?
        var codeChallengeMethod: String?
        /// The installation a native app runs the flow from: its tokens are tied to it.
        var installation: String?
        /// The person's languages, most preferred first (BCP 47 tags, space-separated, as OIDC's
        /// `ui_locales`); before the request's `Accept-Language`.
        var uiLocales: String?

        enum CodingKeys: String, CodingKey {
            case app, provider, purpose, stateless, scope, returnURI, codeChallenge, codeChallengeMethod, installation, uiLocales
            case clientSecret = "client_secret"
        }
    }

    /// The body of `POST /v1/flows/{flow}`.
    struct ResumeBody: Decodable {
        var answer: [String: JSONValue]
        var clientSecret: String?

        enum CodingKeys: String, CodingKey {
            case answer
            case clientSecret = "client_secret"
        }
    }

    @Sendable func start(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let body = try await request.decode(as: StartBody.self, context: context)
        let preferred = LanguageChoice.preferred(uiLocales: body.uiLocales.map { String($0.prefix(200)) }, acceptLanguage: request.headers[.acceptLanguage])
        do {
            return try await start(body, preferred: preferred, request: request, context: context)
        } catch let error as BrokerError {
            if let preferred { throw told(error, in: preferred) }
            // The app's default, read through the cache, and never for an app that is not known (a
            // flood of made-up ids must not reach the store or fill the cache).
            let appDefault = error.code == .invalidClient ? nil : try? await broker.oauth.clients.apps.app(id: body.app)?.view.language
            throw told(error, in: appDefault ?? "en")
        }
    }

    /// A refusal's description in the person's language (the code stays as it is).
    func told(_ error: BrokerError, in language: String) -> BrokerError {
        var error = error
        error.message = catalog.text(of: error, in: language)
        return error
    }

    func start(_ body: StartBody, preferred: String?, request: Request, context: GatehouseRequestContext) async throws -> Response {
        if body.codeChallenge != nil, body.codeChallengeMethod != "S256" {
            throw BrokerError(.invalidRequest, .badRequest, "codeChallengeMethod must be S256 (plain is not accepted).")
        }
        var flowRequest = FlowRequest(
            appID: body.app, providerID: body.provider, purpose: body.purpose ?? .authenticate, stateless: body.stateless ?? false,
            scopes: body.scope.map { $0.split(separator: " ").map(String.init) }, clientIP: context.clientIP, installationID: body.installation
        )
        flowRequest.language = preferred
        // An access token (Bearer or DPoP) registers a credential for its account; Basic is the app's own.
        var client: ClientCredentials?
        var dpop = AccessTokenAuthentication.dpop(request, issuer: issuer)
        var verifiedDPoPKey: String?
        let authorization = request.headers[.authorization]?.lowercased() ?? ""
        if authorization.hasPrefix("bearer ") || authorization.hasPrefix("dpop ") {
            let token = try AccessTokenAuthentication.presented(request, issuer: issuer)
            (flowRequest.signedInAccountID, verifiedDPoPKey) = try await broker.oauth.accountRegistering(with: token, appID: body.app)
            // A bound token's proof was checked (and used up) with the token: it binds the new tokens too.
            if verifiedDPoPKey != nil { dpop = nil }
            client = try ClientCredentials.presented(basic: nil, bodyClientID: nil, bodySecret: body.clientSecret)
        } else {
            client = try ClientAuthentication.credentials(from: request, bodySecret: body.clientSecret)
        }
        let outcome = try await engine.start(
            flowRequest, returnURI: body.returnURI, codeChallenge: body.codeChallenge, client: client, dpop: dpop, verifiedDPoPKey: verifiedDPoPKey
        )
        return try FlowResponse(outcome, challenges: engine.challenges, catalog: catalog).response(status: .created)
    }

    @Sendable func resume(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let flowID = try context.parameters.require("flow")
        let body = try await request.decode(as: ResumeBody.self, context: context)
        let client = try ClientAuthentication.credentials(from: request, bodySecret: body.clientSecret)
        let outcome: FlowOutcome
        do {
            outcome = try await engine.resume(
                flowID: flowID, answer: ChallengeResponse(body.answer), client: client, dpop: AccessTokenAuthentication.dpop(request, issuer: issuer)
            )
        } catch let error as BrokerError {
            // The flow's language; for a flow that is gone, or a throttled request (which must cost
            // no extra read), what the request asks for.
            let readsFlow = error.code != .flowNotFound && error.kind != .tooManyRequests
            let language = (readsFlow ? await engine.language(ofFlow: flowID) : nil) ?? request.pageLanguage()
            throw told(error, in: language)
        }
        return try FlowResponse(outcome, challenges: engine.challenges, catalog: catalog).response(status: .ok)
    }
}

/// The JSON answer of both flow routes.
struct FlowResponse: Encodable {
    var flow: String
    var status: String
    var expiresAt: Date?
    var challenge: ChallengeBody?
    var tokens: IssuedTokens?
    var account: AccountBody?
    /// What else the app is told, as top-level fields beside these: what the provider that handed
    /// the flow over adds (`FlowCompletion`), or why a flow stopped without tokens (`FlowStep.stop`).
    var notice: [String: JSONValue] = [:]

    enum CodingKeys: String, CodingKey { case flow, status, expiresAt, challenge, tokens, account }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(flow, forKey: .flow)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(challenge, forKey: .challenge)
        try container.encodeIfPresent(tokens, forKey: .tokens)
        try container.encodeIfPresent(account, forKey: .account)
        // A plugin's field never replaces one of the flow's own.
        var extra = encoder.container(keyedBy: NoticeKey.self)
        for (name, value) in notice where CodingKeys(stringValue: name) == nil { try extra.encode(value, forKey: NoticeKey(name)) }
    }

    struct NoticeKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    struct AccountBody: Encodable {
        var id: String
        var username: String
    }

    /// A challenge on the wire: its type and the answer fields its declaration names, next to its
    /// type-specific facts, and `texts`: what an app shows a person for it, in the flow's `language`.
    struct ChallengeBody: Encodable {
        var challenge: Challenge
        var description: ChallengeDescription?
        var catalog: MessageCatalog

        func encode(to encoder: any Encoder) throws {
            var fields = challenge.fields
            fields["type"] = .string(challenge.type)
            fields["fields"] = .array((description?.inputs ?? []).filter { $0.kind != .hidden }.map { .string($0.name) })
            if let description {
                let language = fields[Challenge.languageField]?.stringValue ?? "en"
                fields["texts"] = ChallengeTexts(description, for: challenge, language: language, catalog: catalog).json
            }
            try fields.encode(to: encoder)
        }
    }

    init(_ outcome: FlowOutcome, challenges: ChallengeCatalog, catalog: MessageCatalog) throws {
        switch outcome {
        case .challenge(let flowID, let challenge, let expiresAt):
            self.flow = flowID
            self.status = "challenge"
            self.expiresAt = expiresAt
            self.challenge = ChallengeBody(challenge: challenge, description: challenges.description(of: challenge.type), catalog: catalog)
        case .completed(let flowID, let tokens, let account, let notice):
            self.flow = flowID
            self.status = "completed"
            self.tokens = tokens
            self.account = account.map { AccountBody(id: $0.id, username: $0.username) }
            self.notice = notice
        case .stopped(let flowID, let status, let details):
            self.flow = flowID
            self.status = status
            self.notice = details
        case .chooseProvider, .authorized:
            // Only flows started at /oauth2/authorize end this way, and those answer to browser forms only.
            throw BrokerError.internalFailure("A browser flow reached the JSON flow API.")
        }
    }

    func response(status: HTTPResponse.Status) throws -> Response {
        var headers = HTTPFields()
        if let nonce = tokens?.dpopNonce { headers[AccessTokenAuthentication.dpopNonceHeader] = nonce }
        headers[.contentType] = "application/json; charset=utf-8"
        headers[.cacheControl] = "no-store"
        headers[.pragma] = "no-cache"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONCoding.encoder.encode(self))))
    }
}
