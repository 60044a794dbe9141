import Foundation

// The optional capabilities of a plugin. Each is a protocol of its own: a plugin adopts the ones it
// implements, and the registry finds them once, when it builds the instance (nothing else casts).

/// Reports whether the plugin's upstream (directory, API, mail server...) is reachable, for `/readyz`.
public protocol HealthReporting: GatehousePlugin {
    /// The upstream's health now.
    func health() async -> PluginHealth
}

/// Checks the config against the upstream step by step (`gatehouse providers test`).
public protocol Diagnosable: GatehousePlugin {
    /// The steps, stopping at the first that fails; with a username (and a password) as far as
    /// finding (and signing in) that user.
    func diagnose(username: String?, password: String?) async -> [DiagnosticStep]
}

/// Keeps data about people, apps or administrators that it forgets when they go away.
public protocol Forgetting: GatehousePlugin {
    /// Forgets what the plugin keeps about someone or something that is going away. Answers the
    /// changes worth an audit event each (what departed admins added).
    func forget(_ departure: Departure) async throws -> [AdminChange]
}

/// An identity provider that can tell whether an identity it once vouched for is still good.
public protocol Rechecking: IdentityProvider {
    /// Whether the identity is still good (the account is not disabled in the directory, the user
    /// still exists), with the provider's fresh view of the person when it read one (those claims
    /// replace the link's, so the next tokens carry them). Asked on every refresh and single sign-on,
    /// so that someone removed upstream stops getting tokens.
    func recheck(subject: String) async throws -> IdentityRecheck
}

/// An identity provider that identifies someone from a signed assertion (a JWT an app's back end
/// issued): the assertion is also accepted at `/oauth2/token` with the JWT bearer grant (RFC 7523).
public protocol AssertionVerifying: IdentityProvider {
    /// The identity the assertion proves. Refusals are `invalid_grant` with a `reason`; a provider
    /// that does not know the assertion's issuer answers with reason `unknown_issuer`, so the next
    /// provider can be asked.
    func verifyAssertion(_ assertion: String, for app: AppView) async throws -> ExternalIdentity
}

/// An identity provider that hands its flows over to another provider (`FlowStep.handOver`) and
/// decides once that one identified the person. A flow is handed on once, so no flow is handed to it.
public protocol HandingOver: IdentityProvider {
    /// Goes on after the provider it handed the flow to identified the person as `identity`;
    /// `context.state(_:)` is what it handed over. Lets that identity through (answering
    /// `.identified` with it), or refuses.
    func resume(after identity: ExternalIdentity, in context: FlowContext) async throws -> FlowStep
    /// The flow completes: called once the flow is claimed, after every factor and before its new
    /// credentials (a device key) are stored. A refusal ends the flow without tokens.
    func completing(_ completion: FlowCompletion) async throws
    /// The flow completed and its credentials are stored: what is left to do (through
    /// `completion`: `retireInstallation`, `linkAddress`, `audit`); answers fields the app is told beside the tokens.
    func completed(_ completion: FlowCompletion) async throws -> [String: JSONValue]
}

/// An identity provider that stops its flows (`FlowStep.stop`) with something to do once the engine
/// claimed the flow (uses something up, issues something), so that of two racing answers only one does it.
public protocol FlowStopping: IdentityProvider {
    /// What stopping does (the stop's `state` is `context.state(_:)`); answers fields the app is told
    /// beside the stop's details.
    func stopping(in context: FlowContext) async throws -> [String: JSONValue]
}

/// An identity provider that keeps something for a flow before the account exists (a passkey made
/// during a registration, stored with an expiry so that an abandoned one is purged).
public protocol IdentityCompleting: IdentityProvider {
    /// A flow in which this provider identified the person completed: every factor passed and its
    /// identity is linked to `completion.account`. What it kept becomes permanent here. Called before
    /// the tokens are issued; a refusal ends the flow without them.
    func identifiedFlowCompleted(_ completion: FlowCompletion) async throws
}

/// An identity provider whose device sign-in keys are checked again at each use.
public protocol KeyUseChecking: IdentityProvider {
    /// Whether a key it registered may still be used at `app` (a refresh of tokens its sign-in got),
    /// under the app's settings as they are now; a refusal is an `invalid_grant` with a `reason`.
    func checkKeyUse(_ key: SignInKey, at app: AppView) async throws
}

/// An authenticator that asks for another factor first (`FlowStep.requireFactor`) and goes on after it.
public protocol FactorChaining: Authenticator {
    /// Goes on after the authenticator it asked for passed; `context.state(_:)` is what it handed over.
    func resume(after passed: FactorResult, in context: FlowContext) async throws -> FlowStep
}

/// Lets administrators manage collections it keeps (`AdminResource`), each with its handlers.
public protocol AdminResourceOffering: GatehousePlugin {
    /// The collections, with what lists, adds and removes their items.
    var adminResources: [AdminResource] { get }
}

/// Lets a signed-in person act on their own credentials here (change a PIN), each operation with its handler.
public protocol AccountOperationOffering: GatehousePlugin {
    /// The operations.
    var accountOperations: [AccountOperation] { get }
}

/// Offers HTTP endpoints under `/v1/plugins/<instance>/` (or at paths of the server's own it
/// claims), each with its handler, and the pages they answer.
public protocol EndpointOffering: GatehousePlugin {
    /// The endpoints.
    var endpoints: [PluginEndpoint] { get }
    /// The Mustache templates of the pages its endpoints answer (`PluginEndpointAnswer.page`), by name; each renders
    /// inside the broker's page layout, escaped, under its strict Content-Security-Policy.
    var pageTemplates: [String: String] { get }
}

extension EndpointOffering {
    /// None.
    public var pageTemplates: [String: String] { [:] }
}
