import Foundation
import GatehousePluginKit

/// The consent phase: an app whose policy asks for it (`consentRequired`), or a device's approval,
/// waits for the person to allow (`{}`) or deny (`deny`) the scopes it asks for; what they allowed
/// is remembered per account and app.
struct ConsentPhase {
    let engine: FlowEngine
    let app: App

    /// Whether the app must ask the person before it gets the scopes `request` asks for (`prompt=consent`
    /// asks again). A device's approval is always asked: the person confirms the code and the app.
    func isNeeded(accountID: String, request: AuthorizationRequest) async throws -> Bool {
        if request.device != nil { return true }
        guard app.policy.consentRequired else { return false }
        if request.prompt.contains("consent") { return true }
        return try await !ConsentBook(store: engine.store, clock: engine.clock).covers(accountID: accountID, appID: app.id, scopes: request.scopes)
    }

    /// Shows the consent page: the flow waits in the `consent` phase.
    func ask(_ flow: inout FlowRecord) async throws -> FlowOutcome {
        flow.phase = .consent
        flow.pluginState = FlowState()
        flow.challenge = Challenge(
            type: flow.authorization?.request.device == nil ? ChallengeDescription.consent.type : ChallengeDescription.deviceConsent.type,
            fields: [
                "appName": .string(app.name), "scopes": .array(flow.scopes.map(JSONValue.string)),
                "purposes": .string(flow.scopes.map { Self.purpose(of: $0, in: flow.language ?? "en") }.joined(separator: "; ")),
            ]
        )
        if let device = flow.authorization?.request.device { flow.challenge.fields["userCode"] = .string(device.userCode) }
        try await engine.save(&flow)
        return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
    }

    /// What a scope lets an app do, in words.
    static func purpose(of scope: String, in language: String = "en") -> String {
        let english =
            switch scope {
            case "openid": "know who you are"
            case "profile": "see your name and picture"
            case "email": "see your email address"
            case "groups": "see the groups you belong to"
            case "offline_access": "stay signed in while you are away"
            default: "use {scope}"
            }
        return ConsentPurposes.translations.text(english, in: language, ["scope": scope])
    }

    /// The person allowed (`{}`) or denied (`deny`) the app.
    func answer(_ answer: ChallengeResponse, in flow: FlowRecord) async throws -> FlowOutcome {
        guard let authorization = flow.authorization, let accountID = flow.accountID,
            let account = try await engine.store.account(id: accountID)
        else { throw BrokerError(.flowNotFound, .notFound, "No such flow, or it has expired or finished; start a new one.") }
        // Disabled while the person was deciding.
        try account.refuseSignInIfDisabled()
        if answer.values["deny"] != nil {
            guard try await engine.store.deleteFlow(id: flow.id, version: flow.version) else {
                throw BrokerError(.flowConflict, .conflict, "The flow was answered concurrently; start a new one if it did not finish.")
            }
            try await engine.audit("consent.denied", flow: flow, outcome: ErrorCode.accessDenied.rawValue, details: ["scopes": flow.scopes.joined(separator: " ")])
            if let device = authorization.request.device { return .authorized(flowID: flow.id, redirect: try await engine.denyDeviceAuthorization(device, flow: flow)) }
            return .authorized(
                flowID: flow.id,
                redirect: OAuthRedirect.url(
                    authorization.request.redirectURI,
                    parameters: [
                        ("error", "access_denied"), ("error_description", "The person did not allow access."), ("state", authorization.request.state),
                        ("iss", engine.tokens.issuer),
                    ]
                )
            )
        }
        try await ConsentBook(store: engine.store, clock: engine.clock).record(accountID: accountID, appID: app.id, scopes: flow.scopes)
        try await engine.audit("consent.granted", flow: flow, outcome: nil, details: ["scopes": flow.scopes.joined(separator: " ")])
        var next = flow
        next.challenge = Challenge(type: "none")
        return try await engine.complete(next, app: app, account: account)
    }
}
