import Foundation

/// The situation one flow step runs in.
public struct FlowContext: Sendable {
    /// The flow's id (a callback's `state`).
    public var flowID: String
    /// The app the flow runs for.
    public var app: AppView
    /// What the flow was started with.
    public var request: FlowRequest
    /// The account the flow has established, for authenticators; nil while identifying.
    public var account: Account?
    /// The addresses the account's identity providers vouch for (`email` with `email_verified`), for
    /// authenticators that send codes; filled when an authenticator begins.
    public var verifiedEmails: [EmailAddress]
    /// True when this very flow created the account (a registration, or a first sign-in).
    public var accountCreated: Bool = false
    /// The device sign-in key the person signed in with, when they did (its `deviceID` names the
    /// device, for counting wrong answers per device).
    public var signInKey: SignInKey?
    /// The device-attestation checker the app allows (the first instance adopting `DeviceAttesting`
    /// in its policy's authenticators, then identity providers), for providers that register keys.
    public var deviceAttestation: (any DeviceAttesting)?

    /// A context.
    public init(flowID: String, app: AppView, request: FlowRequest, account: Account? = nil, verifiedEmails: [EmailAddress] = []) {
        self.flowID = flowID
        self.app = app
        self.request = request
        self.account = account
        self.verifiedEmails = verifiedEmails
    }
}
