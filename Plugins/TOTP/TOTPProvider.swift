import Foundation
import GatehousePluginKit

/// One `totp` instance: an authenticator that enrols an authenticator app the first time it runs for
/// an account, then asks for its current code (or a recovery code). From the account page
/// (`FlowContext.enrolling`) a person sets a new app up: first the current app's code (or a recovery
/// code), then the new app, which replaces the old one once its first code confirms it.
public struct TOTPProvider: Authenticator {
    public let id: String
    let config: TOTPPlugin.Config
    /// The `issuer` of new enrolments' URIs.
    let issuer: String
    let book: TOTPBook
    let environment: PluginEnvironment

    init(id: String, config: TOTPPlugin.Config, issuer: String, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.issuer = issuer
        self.book = TOTPBook(config: config, environment: environment)
        self.environment = environment
    }

    /// What the flow keeps between steps.
    struct State: Codable, Sendable {
        enum Mode: String, Codable { case setup, recoveryCodesShown, code, recoveryCode }
        var mode: Mode
        /// The secret being enrolled (Base32), until the first code confirms it.
        var secret: String?
        /// Setting a new app up in place of the account's current one (from the account page): the
        /// code steps prove the current one, then the setup replaces it.
        var replacing: Bool?
        /// The app the code steps proved (`fingerprint(of:)`): the setup replaces that one only.
        var replaces: String?
    }

    // The account page offers a new app; the step-up it asks is the current app's code.
    public var traits: PluginTraits { PluginTraits(accountEnrolment: "Set up an authenticator app") }

    public func begin(in context: FlowContext) async throws -> FlowStep {
        let account = try self.account(of: context)
        guard try await book.enrollment(for: account.id) != nil else { return try setupStep(for: account) }
        try await book.refuseIfLocked(accountID: account.id)
        return try codeStep(replacing: context.enrolling)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let account = try self.account(of: context)
        let current = try context.state(State.self)
        switch current.mode {
        case .setup:
            return try await confirmSetup(current, answer: answer, account: account, appID: context.app.id)
        case .code where current.replacing == true:
            if answer.values["use_recovery_code"] != nil {
                return .challenge(Challenge(type: Self.recoveryChallenge.type), state: State(mode: .recoveryCode, replacing: true))
            }
            let proved = try await proving(account) { try await book.check(code: try answer.string("code"), accountID: account.id) }
            return try setupStep(for: account, replacing: proved)
        case .recoveryCode where current.replacing == true:
            if answer.values["use_app"] != nil { return try codeStep(replacing: true) }
            let proved = try await proving(account) {
                let left = try await book.useRecoveryCode(try answer.string("recoveryCode"), accountID: account.id)
                await audit("totp.recovery_code_used", app: context.app.id, account: account.id, details: ["recoveryCodesLeft": String(left)])
            }
            return try setupStep(for: account, replacing: proved)
        case .recoveryCodesShown:
            return .verified(FactorResult(authenticatorID: id, method: "otp"))
        case .code:
            if answer.values["use_recovery_code"] != nil {
                return .challenge(Challenge(type: Self.recoveryChallenge.type), state: State(mode: .recoveryCode))
            }
            try await book.check(code: try answer.string("code"), accountID: account.id)
            return .verified(FactorResult(authenticatorID: id, method: "otp"))
        case .recoveryCode:
            if answer.values["use_app"] != nil { return try codeStep() }
            let left = try await book.useRecoveryCode(try answer.string("recoveryCode"), accountID: account.id)
            await audit("totp.recovery_code_used", app: context.app.id, account: account.id, details: ["recoveryCodesLeft": String(left)])
            return .verified(FactorResult(authenticatorID: id, method: "otp"))
        }
    }

    /// A new secret to enrol: its URI, QR code and Base32 text, for the first code to confirm.
    func setupStep(for account: Account, replacing proved: String? = nil) throws -> FlowStep {
        let algorithm = config.newAlgorithm
        // A key as long as the HMAC's output (RFC 4226 section 4 asks for at least 128 bits; RFC
        // 6238's reference keys are 20, 32 and 64 bytes).
        let length =
            switch algorithm {
            case .sha1: 20;
            case .sha256: 32;
            case .sha512: 64
            }
        var generator = SystemRandomNumberGenerator()
        let secret = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let otp = OneTimePassword(secret: secret, algorithm: algorithm, digits: config.digits, period: config.period)
        // A label of at most 64 characters keeps the URI well inside a QR code whatever the username.
        let uri = otp.uri(issuer: issuer, account: String(account.username.prefix(64)))
        guard let qr = QRCode(uri) else { throw BrokerError.internalFailure("The enrolment URI does not fit in a QR code.") }
        let base32 = Base32.encode(secret)
        let grouped = stride(from: 0, to: base32.count, by: 4).map { offset in
            String(base32.dropFirst(offset).prefix(4))
        }.joined(separator: " ")
        let fields: [String: JSONValue] = [
            "otpauthURI": .string(uri), "qrCode": .string(ChallengeElement.svgDataURL(qr.svg())), "secret": .string(grouped),
            "issuer": .string(issuer), "account": .string(account.username), "algorithm": .string(algorithm.rawValue),
            "digits": .number(Double(config.digits)), "period": .number(Double(config.period)),
        ]
        return .challenge(
            Challenge(type: Self.setupChallenge.type, fields: fields), state: State(mode: .setup, secret: base32, replacing: proved == nil ? nil : true, replaces: proved)
        )
    }

    /// The first code proves the app holds the secret: the enrolment is stored (with that step used),
    /// in place of the account's current one when the flow replaces it, and the recovery codes are
    /// shown, once (a replaced app's codes stop working with it).
    func confirmSetup(_ state: State, answer: ChallengeResponse, account: Account, appID: String) async throws -> FlowStep {
        guard let base32 = state.secret, let secret = Base32.decode(base32) else { throw BrokerError.internalFailure("The enrolment lost its secret.") }
        let otp = OneTimePassword(secret: secret, algorithm: config.newAlgorithm, digits: config.digits, period: config.period)
        let code = try answer.string("code").filter { $0 != " " }
        let now = environment.clock.now
        guard code.utf8.count == otp.digits, let step = otp.matchingStep(of: code, at: now, window: config.window) else {
            throw BrokerError(.invalidCode, .failedAttempt, "That code is not right; check the app's clock and try the current code.")
        }
        let recovery = try await book.newRecoveryCodes()
        let enrollment = TOTPEnrollment(
            sealedSecret: try await book.seal(secret, accountID: account.id), algorithm: otp.algorithm, digits: otp.digits, period: otp.period,
            username: account.username, createdAt: now, lastUsedStep: step, lastUsedAt: now,
            recoveryCodes: recovery.digests, recoveryCodesIssuedAt: now, recoveryCodesUsed: 0
        )
        if state.replacing == true {
            // Only the app whose code this flow checked is replaced: one removed meanwhile stays removed.
            try await book.update(
                for: account.id, conflict: "The authenticator app changed at the same time elsewhere; try again.",
                ifMissing: BrokerError(.conflict, .conflict, "The authenticator app was removed meanwhile; start again.").endingFlow()
            ) { current in
                guard let proved = state.replaces, Self.fingerprint(of: current) == proved else {
                    throw BrokerError(.conflict, .conflict, "The authenticator app changed meanwhile; start again.").endingFlow()
                }
                current = enrollment
                return true
            }
        } else {
            guard try await book.insert(enrollment, for: account.id) else {
                throw BrokerError(.conflict, .conflict, "An authenticator app was set up for this account meanwhile; sign in again with it.").endingFlow()
            }
        }
        await audit(
            state.replacing == true ? "totp.replaced" : "totp.enrolled", app: appID, account: account.id,
            details: ["algorithm": otp.algorithm.rawValue, "digits": String(otp.digits)])
        let challenge = Challenge(type: Self.recoveryCodesChallenge.type, fields: ["recoveryCodes": .array(recovery.codes.map { .string($0) })])
        return .challenge(challenge, state: State(mode: .recoveryCodesShown))
    }

    /// Runs `check` (the current app's code or a recovery code) and answers the fingerprint of the app
    /// it proved: the same app before and after, or the flow ends (another flow replaced it meanwhile).
    func proving(_ account: Account, _ check: () async throws -> Void) async throws -> String {
        let before = try await book.enrollment(for: account.id)?.value
        try await check()
        guard let before, let after = try await book.enrollment(for: account.id)?.value, Self.fingerprint(of: before) == Self.fingerprint(of: after) else {
            throw BrokerError(.conflict, .conflict, "The authenticator app changed meanwhile; start again.").endingFlow()
        }
        return Self.fingerprint(of: after)
    }

    /// Which app an enrolment is: its sealed key's digest (a new app has a new key).
    static func fingerprint(of enrollment: TOTPEnrollment) -> String { Base64URL.sha256(enrollment.sealedSecret) }

    func codeStep(replacing: Bool = false) throws -> FlowStep {
        .challenge(
            Challenge(type: Self.codeChallenge.type, fields: ["digits": .number(Double(config.digits))]), state: State(mode: .code, replacing: replacing ? true : nil))
    }

    func account(of context: FlowContext) throws -> Account {
        guard let account = context.account else { throw BrokerError.internalFailure("The totp authenticator runs only for an account.") }
        return account
    }

    /// Audits what already happened: the change is stored, so a failing audit write is logged rather
    /// than undoing the answer (a recovery code used up without the sign-in, new codes never shown).
    func audit(_ type: String, app: String?, account: String, details: [String: String] = [:]) async {
        do {
            try await environment.audit?.append(type, appID: app, accountID: account, details: details)
        } catch {
            environment.logger.error("The audit event could not be written", metadata: ["event": "\(type)", "account": "\(account)", "error": "\(error)"])
        }
    }

    /// Deregistration: the enrolment goes with the account.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        if case .account(let accountID) = departure { try await book.remove(for: accountID) }
        return []
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension TOTPProvider: Forgetting {}
