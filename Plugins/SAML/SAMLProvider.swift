import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// One `saml` instance: signs people in at a SAML 2.0 identity provider with the Web Browser SSO
/// profile. The browser goes to the IdP with an AuthnRequest (HTTP-Redirect, or HTTP-POST) whose
/// `RelayState` is the flow; the IdP posts a Response to this provider's callback (the ACS URL), which
/// the plugin verifies (xmlsec), checks against the request it sent, uses once, and maps to an
/// identity. The SP's metadata is served at `/saml/<instance>/metadata`.
public struct SAMLProvider: IdentityProvider, EndpointOffering, HealthReporting {
    public let id: String
    let config: SAMLConfig
    let environment: PluginEnvironment
    let directory: SAMLIdPDirectory

    init(id: String, config: SAMLConfig, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.environment = environment
        directory = SAMLIdPDirectory(config: config, http: environment.http, clock: environment.clock, logger: environment.logger)
    }

    public var traits: PluginTraits { PluginTraits(openEnrollment: true, trustsEmailForLinking: config.trustEmail, registration: .federated) }

    /// Where the IdP posts its responses: this provider's own callback.
    var acsURL: String { environment.callbackURL + "/" + id }
    /// Where the SP's metadata is served (and, by default, the SP's entity id).
    var metadataURL: String { environment.issuer + "/" + Self.metadataPath(id) }
    var spEntityID: String { config.entityID ?? metadataURL }
    static func metadataPath(_ id: String) -> String { "saml/\(id)/metadata" }

    var builder: SAMLRequestBuilder { SAMLRequestBuilder(spEntityID: spEntityID, acsURL: acsURL, keyPEM: config.keyPEM, certificateDER: config.certificateDER) }

    /// What the flow keeps between the request and the response.
    struct PendingSignIn: Codable {
        /// The AuthnRequest's ID: the response must answer it.
        var requestID: String
        var startedAt: Date
        var maxAge: Int?
        var reauthenticate: Bool
    }

    static let challenge = ChallengeDescription(
        type: "saml",
        summary:
            "Sign in at a SAML 2.0 identity provider: open `url` in a browser; the IdP posts its answer to the broker, which then sends the browser to the app's returnURI with `flow`.",
        prompt: "Continue at your organisation's sign-in page.",
        elements: [
            .hidden("SAMLResponse", label: "SAML response", maxLength: 256 * 1024),
            .detail("url", .string, "The IdP's sign-in URL (HTTP-Redirect binding) to open in a browser."),
            .detail("provider", .string, "The provider instance id."),
            .detail("form", .object, "With the HTTP-POST binding: the form a browser posts (`action`, `fields`)."),
            .callback(urlField: "url", answerFields: ["SAMLResponse"], stateParameter: "RelayState", formField: "form"),
        ])

    // MARK: - Sign-in

    public func begin(in context: FlowContext) async throws -> FlowStep {
        let idp: SAMLIdPMetadata
        do { idp = try await directory.current() } catch { throw error.brokerError }
        let now = environment.clock.now
        let reauthenticate = context.signInAgain || context.freshSignInWithin?.value == 0
        // An NCName: SAML IDs must not start with a digit.
        let requestID = "_" + RandomToken.make()
        let sign = config.signRequests || idp.wantAuthnRequestsSigned
        guard !sign || config.keyPEM != nil else {
            throw SAMLError.metadata("the IdP wants signed requests, and this SP has no privateKey").brokerError
        }
        let forceAuthn = config.forceAuthn || reauthenticate || context.freshSignInWithin != nil
        func request(to destination: String) -> String {
            builder.authnRequest(
                id: requestID, destination: destination, now: now, forceAuthn: forceAuthn, nameIDFormat: config.nameIDFormat, classRefs: config.authnContextClassRefs)
        }
        var fields: [String: JSONValue] = ["provider": .string(id)]
        do throws(SAMLError) {
            // A native app opens a URL: the Redirect binding, whatever the browser binding is.
            if let redirect = idp.redirectURL {
                fields["url"] = .string(try builder.redirectURL(request(to: redirect), to: redirect, relayState: context.flowID, sign: sign))
            }
            if config.requestBinding == .post, idp.postURL == nil {
                throw SAMLError.metadata("requestBinding is post, and the IdP lists no HTTP-POST SingleSignOnService (use redirect)")
            }
            if config.requestBinding == .post || idp.redirectURL == nil, let post = idp.postURL {
                let form = try builder.postFields(request(to: post), relayState: context.flowID, sign: sign)
                fields["form"] = .object(["action": .string(post), "fields": .object(form.mapValues(JSONValue.string))])
                if fields["url"] == nil { fields["url"] = .string(post) }
            }
        } catch { throw error.brokerError }
        let pending = PendingSignIn(requestID: requestID, startedAt: now, maxAge: context.freshSignInWithin?.value, reauthenticate: reauthenticate)
        return .challenge(Challenge(type: Self.challenge.type, fields: fields), state: pending)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let pending = try context.state(PendingSignIn.self)
        guard let encoded = answer.values["SAMLResponse"]?.stringValue, !encoded.isEmpty else {
            throw SAMLError.malformed("the callback carries no SAMLResponse").brokerError
        }
        let assertion: SAMLAssertion
        let now: Date
        do {
            let idp = try await directory.current()
            // The time is read after the metadata, which may have waited for a fetch: the replay
            // record below must outlive whatever the checks at this instant accept.
            now = environment.clock.now
            assertion = try SAMLResponseValidator(config: config, idp: idp, spEntityID: spEntityID, acsURL: acsURL).validate(
                encoded, requestID: pending.requestID, now: now)
        } catch {
            throw error.brokerError
        }
        // One use per assertion, on every node: the shared slice outlives the flow, until the
        // assertion could no longer be presented anyway.
        let key = "assertion:" + Base64URL.sha256(assertion.issuer + "\n" + assertion.id)
        guard try await environment.storage.shared.insert(true, key: key, expiresAt: assertion.usableUntil) else {
            throw SAMLError.condition("the assertion was used before (replay)").brokerError
        }
        var identity = try SAMLIdentityMapper(config: config).identity(from: assertion, providerID: id)
        identity.authTime = try authenticationTime(assertion, pending: pending, now: now)
        return .identified(identity)
    }

    /// When the person authenticated at the IdP (`AuthnInstant`), checked against what the app asked:
    /// within `max_age`, and after the browser was sent to the IdP for `prompt=login`.
    func authenticationTime(_ assertion: SAMLAssertion, pending: PendingSignIn, now: Date) throws(BrokerError) -> Date? {
        let skew = config.clockSkew.timeInterval
        let again = BrokerError(.loginRequired, .forbidden, "The identity provider did not ask you to sign in again, as this app requires; sign in again.")
        if let maxAge = pending.maxAge {
            guard let instant = assertion.authnInstant, now.timeIntervalSince(instant) <= TimeInterval(maxAge) + skew else {
                throw again.because("idp_authn_instant_too_old").endingFlow()
            }
        }
        if pending.reauthenticate {
            guard let instant = assertion.authnInstant, instant >= pending.startedAt.addingTimeInterval(-skew) else {
                throw again.because("idp_not_reauthenticated").endingFlow()
            }
        }
        return assertion.authnInstant
    }

    // MARK: - Metadata and health

    public var endpoints: [PluginEndpoint] {
        [
            // Every `saml` instance claims this path; the one it names answers (the others answer
            // `not_found`, and the broker asks the next).
            .forAnyone(.get, "saml/:instance/metadata", summary: "A SAML service provider's metadata (entity id, ACS URL, certificates), for the IdP to import.") {
                call in
                guard call.parameters["instance"] == id else { throw BrokerError(.notFound, .notFound, "No SAML provider '\(call.parameters["instance"] ?? "")'.") }
                let idp = try? await directory.current()
                let xml = builder.metadata(
                    signRequests: config.signRequests || (idp?.wantAuthnRequestsSigned ?? false), wantAssertionsSigned: config.requireSignature != .response,
                    nameIDFormat: config.nameIDFormat)
                return .document(Data(xml.utf8), contentType: "application/samlmetadata+xml")
            }
        ]
    }

    public func health() async -> PluginHealth {
        do {
            _ = try await directory.current()
            return PluginHealth(healthy: true)
        } catch {
            return PluginHealth(healthy: false, detail: error.reason)
        }
    }
}
