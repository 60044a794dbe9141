import Foundation
import GatehousePluginKit

/// One `email-code` instance in all its roles. As an identity provider (passwordless) it asks for an
/// address, or takes the app's `login_hint`, and identifies the person as that address once the
/// emailed code is right. As an authenticator it sends the code to the account's verified address.
/// Either way the answer `{"resend": true}` sends a new code, and `{"code": "..."}` checks one.
public struct EmailCodeProvider: IdentityProvider, Authenticator, AddressVerifying {
    public var traits: PluginTraits { PluginTraits(openEnrollment: true, trustsEmailForLinking: true, registration: .passwordless) }
    public var proofMethod: String { "email_code" }
    /// Its addresses are proven with a code the broker sent: good enough to link accounts by.
    public var trustsEmailForLinking: Bool { true }

    public let id: String
    let codes: CodeBook

    init(id: String, config: EmailCodePlugin.Config, environment: PluginEnvironment) {
        self.id = id
        self.codes = CodeBook(config: config, environment: environment)
    }

    /// What the flow keeps between steps.
    struct State: Codable, Sendable {
        /// Nil while the address is still to be asked for.
        var address: EmailAddress?
        /// A second factor for an account with no verified address: the address becomes its own.
        var enrolling: Bool = false
    }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        if context.account != nil {
            if let address = context.verifiedEmails.first { return try await send(to: address, context: context) }
            let mayEnrol =
                switch codes.config.enrollment {
                case .always: true
                case .registration: context.accountCreated
                case .never: false
                }
            guard mayEnrol else {
                throw BrokerError(.noVerifiedEmail, .forbidden, "This account has no verified email address to send the code to; ask an administrator.")
                    .because("no_verified_email").endingFlow()
            }
            // Enrolment: the account names an address and proves it with the code.
            let challenge = Challenge(
                type: Self.addressChallenge.type, fields: ["enrol": true],
                prompt: "This account needs an email address for its sign-in codes. We will send a code to prove it is yours."
            )
            return .challenge(challenge, state: State(enrolling: true))
        }
        if let hint = context.loginHint.flatMap(EmailAddress.init) {
            return try await send(to: hint, context: context)
        }
        return .challenge(Challenge(type: Self.addressChallenge.type), state: State())
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let current = try context.state(State.self)
        guard let address = current.address else {
            guard let address = EmailAddress(try answer.string("email")) else {
                throw BrokerError(.invalidEmail, .badRequest, "That is not an email address.")
            }
            return try await send(to: address, context: context, enrolling: current.enrolling)
        }
        // `true` from JSON clients, "true" from the browser form's button.
        if answer.values["resend"] == .bool(true) || answer.values["resend"] == .string("true") {
            return try await send(to: address, context: context, enrolling: current.enrolling)
        }
        let verified = try await codes.check(try answer.string("code"), binding: Self.binding(context))
        guard context.account == nil else {
            return .verified(FactorResult(authenticatorID: id, method: "otp", enrolledEmail: current.enrolling ? verified : nil))
        }
        return .identified(
            ExternalIdentity(
                providerID: id, subject: verified.value, username: verified.value, claims: IdentityClaims(email: verified.value, emailVerified: true), methods: ["otp"]
            )
        )
    }

    private func send(to address: EmailAddress, context: FlowContext, enrolling: Bool = false) async throws -> FlowStep {
        let delivery = try await codes.send(
            to: address, binding: Self.binding(context), appID: context.app.id, appName: context.app.name, clientIP: context.clientIP,
            language: context.language)
        let state = State(address: address, enrolling: enrolling)
        return .challenge(challenge(delivery), state: state)
    }

    /// The `email_code` challenge: where the code went (masked) and its timings.
    func challenge(_ delivery: CodeDelivery) -> Challenge {
        let time = ISO8601DateFormatter()
        return Challenge(
            type: Self.codeChallenge.type,
            fields: [
                "sentTo": .string(delivery.sentTo.masked), "codeLength": .number(Double(codes.config.codeLength)),
                "codeExpiresAt": .string(time.string(from: delivery.expiresAt)), "resendAfter": .string(time.string(from: delivery.resendAfter)),
            ]
        )
    }

    /// Asks for the address to send a code to.
    static let addressChallenge = ChallengeDescription(
        type: "email_address", summary: "The email address to send a one-time code to.", prompt: "We will email you a code to sign in with.",
        elements: [
            .email("email", label: "Email address", maxLength: 320),
            .detail("enrol", .boolean, "True when the address becomes the account's address for codes (enrolment)."),
        ])

    /// Asks for the code that was sent; `resend` asks for a new one.
    static let codeChallenge = ChallengeDescription(
        type: "email_code", summary: "The one-time code sent by email.", prompt: "Enter the code we sent to {sentTo}.",
        elements: [
            .code("code", label: "Code", maxLength: 32), .action("resend", label: "Send a new code"), .detail("sentTo", .string, "Where the code went, masked."),
            .detail("codeLength", .integer, "Digits in the code."), .detail("codeExpiresAt", .string, "When the code stops working (RFC 3339)."),
            .detail("resendAfter", .string, "When a new code may be asked for (RFC 3339)."),
        ])

    /// A flow's code is bound to that flow.
    static func binding(_ context: FlowContext) -> String { "flow:\(context.flowID)" }

    // MARK: - AddressVerifying

    public func sendCode(to address: EmailAddress, binding: String, app: AppView, clientIP: String?) async throws -> CodeDelivery {
        try await codes.send(to: address, binding: binding, appID: app.id, appName: app.name, clientIP: clientIP, language: app.language)
    }

    public func checkCode(_ code: String, binding: String) async throws -> EmailAddress {
        try await codes.check(code, binding: binding)
    }
}

/// `/readyz` (admins: `/admin/v1/readiness`) reports whether the mail server that carries the codes answers.
extension EmailCodeProvider {
    public func health() async -> PluginHealth {
        await codes.environment.mailer.health()
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension EmailCodeProvider: HealthReporting {}
