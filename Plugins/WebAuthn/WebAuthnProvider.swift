import Foundation
import GatehousePluginKit
import GatehouseSupport

/// One `webauthn` instance: passkey sign-in and registration as an identity provider, and a
/// security key or passkey as a second factor.
public struct WebAuthnProvider: IdentityProvider, Authenticator {
    public let id: String
    let config: WebAuthnPlugin.Config
    let relyingParty: RelyingParty
    /// Set when the instance accepts only attested authenticators.
    let trust: AttestationTrust?
    let environment: PluginEnvironment
    let book: CredentialBook

    init(id: String, config: WebAuthnPlugin.Config, relyingParty: RelyingParty, trust: AttestationTrust?, environment: PluginEnvironment) {
        self.id = id
        self.config = config
        self.relyingParty = relyingParty
        self.trust = trust
        self.environment = environment
        self.book = CredentialBook(storage: environment.storage, accounts: environment.accounts, providerID: id)
    }

    // Anyone can make a passkey: a new one makes an account only where the app allows self-registration.
    // People add passkeys from their account page too (a signed-in registration, below).
    public var traits: PluginTraits { PluginTraits(openEnrollment: true, registration: .passkey, accountEnrolment: "Add a passkey") }

    /// What the flow keeps between steps: the ceremony's challenge (bound to this flow, used for its
    /// one answer), and for registrations the handle and name the credential is made for.
    struct State: Codable, Sendable {
        enum Mode: String, Codable { case username, register, signIn, factorRegister, factorSignIn }
        var mode: Mode
        var challenge: String?
        var userHandle: String?
        var username: String?
        var accountID: String?
        /// For a second factor: the credentials the account may answer with.
        var allowed: [String]?
    }

    var algorithms: [COSEKey.Algorithm] { config.algorithms.compactMap(COSEKey.Algorithm.init(name:)) }
    var userVerification: UserVerification { UserVerification(rawValue: config.userVerification) ?? .preferred }

    // MARK: - Identity provider: passkeys

    public func begin(in context: FlowContext) async throws -> FlowStep {
        if context.account != nil { return try await beginFactor(in: context) }
        if let accountID = context.signedInAccountID {
            // A signed-in person adds a passkey, under a new handle: it signs nobody in before the
            // engine links it to their account, once the flow (and any factor it asks) completes.
            guard let account = try await environment.accounts?.account(id: accountID) else {
                throw BrokerError(.invalidToken, .unauthenticated, "The signed-in account no longer exists.")
            }
            return try await createStep(handle: RandomToken.make(byteCount: 32), username: account.username, accountID: accountID, discoverable: true)
        }
        if context.purpose == .register { return try usernameStep() }
        return try getStep(allowed: nil, mode: .signIn)
    }

    public func resume(with answer: ChallengeResponse, in context: FlowContext) async throws -> FlowStep {
        let current = try context.state(State.self)
        switch current.mode {
        case .username:
            let username = try answer.string("username").trimmingCharacters(in: .whitespaces)
            guard !username.isEmpty, username.count <= 64 else { throw BrokerError(.invalidUsername, .badRequest, "Choose a name of 1 to 64 characters.") }
            return try await createStep(handle: RandomToken.make(byteCount: 32), username: username, accountID: nil, discoverable: true)
        case .register:
            let credential = try await register(answer, state: current, discoverable: true, accountID: current.accountID, app: context.app.id)
            return .identified(identity(handle: credential.userHandle, username: current.username ?? "", credential: credential))
        case .signIn:
            return try await signIn(answer, state: current, app: context.app.id)
        case .factorRegister:
            _ = try await register(answer, state: current, discoverable: false, accountID: current.accountID, app: context.app.id)
            return .verified(FactorResult(authenticatorID: id, method: "hwk"))
        case .factorSignIn:
            guard let account = context.account else { throw BrokerError.internalFailure("The webauthn factor runs only for an account.") }
            _ = try await assert(answer, state: current, accountID: account.id, app: context.app.id)
            return .verified(FactorResult(authenticatorID: id, method: "hwk"))
        }
    }

    /// A passkey identifies whoever holds it: the credential must be a passkey made here (not a
    /// second factor's key), and its assertion must verify.
    func signIn(_ answer: ChallengeResponse, state: State, app: String) async throws -> FlowStep {
        let (stored, _) = try await assert(answer, state: state, accountID: nil, app: app)
        guard let owner = try await book.owner(stored.userHandle)?.value else { throw WebAuthnRefusal(.unknownCredential, "This passkey is not registered.").brokerError }
        return .identified(identity(handle: stored.userHandle, username: owner.username, credential: stored))
    }

    func identity(handle: String, username: String, credential: StoredCredential) -> ExternalIdentity {
        // RFC 8176: a hardware-protected key proven with a user presence test; user verification
        // (a PIN or biometrics on the authenticator) makes it multi-factor.
        var methods = ["hwk", "user"]
        if credential.userVerifiedAtLastUse { methods.append("mfa") }
        return ExternalIdentity(providerID: id, subject: handle, username: username, methods: methods)
    }

    // MARK: - Authenticator: a second factor

    func beginFactor(in context: FlowContext) async throws -> FlowStep {
        guard let account = context.account else { throw BrokerError.internalFailure("The webauthn factor runs only for an account.") }
        let credentials = try await book.credentials(of: account.id)
        // From the account page, a security key more (the page's sign-in passed the account's factor).
        if credentials.isEmpty || context.enrolling {
            let handle = try await book.secondFactorHandle(of: account.id)
            return try await createStep(handle: handle, username: account.username, accountID: account.id, discoverable: false)
        }
        let usable = credentials.map(\.value).filter { (try? checkPolicy($0)) != nil }
        guard !usable.isEmpty else {
            // Setting a new key up on the first factor alone would let whoever has the password add
            // theirs; the person's old keys are removed by an administrator (or by the person after
            // a sign-in through another app) instead. Not a wrong answer: nothing was guessed.
            throw BrokerError(
                .accessDenied, .forbidden,
                "None of this account's security keys meets this app's policy any more; ask an administrator to remove them, then set a new one up."
            ).publicly(because: "no_usable_credential").endingFlow()
        }
        return try getStep(allowed: usable, mode: .factorSignIn)
    }

    // MARK: - Ceremonies

    func register(_ answer: ChallengeResponse, state: State, discoverable: Bool, accountID: String?, app: String) async throws -> StoredCredential {
        guard let challenge = state.challenge.flatMap(Base64URL.decode), let handle = state.userHandle else {
            throw BrokerError.internalFailure("The registration lost its challenge.")
        }
        let credentialJSON = answer.values["credential"] ?? .null
        let (response, registered) = try Self.refusing { () throws(WebAuthnRefusal) -> (PublicKeyCredentialJSON, RegisteredCredential) in
            let response = try PublicKeyCredentialJSON(credentialJSON)
            guard let attestationObject = response.attestationObject else { throw WebAuthnRefusal(.malformed, "A registration answers with an attestationObject.") }
            let ceremony = RegistrationCeremony(
                relyingParty: relyingParty, challenge: Array(challenge), userVerification: userVerification, algorithms: algorithms,
                formats: trust == nil ? ["none"] + config.attestationFormats : config.attestationFormats, trust: trust
            )
            let registered = try ceremony.verify(clientDataJSON: response.clientDataJSON, attestationObject: attestationObject, at: environment.clock.now)
            guard registered.id == response.rawID else { throw WebAuthnRefusal(.malformed, "The credential id is not the one the authenticator data names.") }
            return (response, registered)
        }
        let now = environment.clock.now
        let credential = StoredCredential(
            id: response.id, userHandle: handle, publicKey: Base64URL.encode(bytes: registered.publicKey), algorithm: registered.algorithm.name,
            signCount: registered.signCount, aaguid: SecretDigest.hex(registered.aaguid), backupEligible: registered.backupEligible, backupState: registered.backupState,
            attestationFormat: registered.attestationFormat, attestation: registered.attestation.rawValue, attestationVerified: registered.attestationVerified,
            authenticatorDescription: registered.authenticatorDescription,
            name: Self.name(typed: state.username, accountID: accountID, discoverable: discoverable, model: registered.authenticatorDescription),
            discoverable: discoverable, createdAt: now, lastUsedAt: nil,
            counterRegressions: 0, transports: response.transports, userVerifiedAtLastUse: registered.userVerified, anchored: trust != nil,
            // A passkey counts once its flow links it to an account; until then it may be abandoned.
            pendingUntil: discoverable ? now.addingTimeInterval(CredentialBook.pendingLifetime) : nil
        )
        try await book.add(credential, accountID: discoverable ? nil : accountID, registeringFor: discoverable ? accountID : nil, username: state.username ?? "")
        // A passkey is audited once its flow completed (`identifiedFlowCompleted`), under its account.
        if credential.pendingUntil == nil { await auditRegistered(credential, app: app, account: accountID) }
        return credential
    }

    func auditRegistered(_ credential: StoredCredential, app: String, account: String?) async {
        await audit(
            "webauthn.registered", app: app, account: account,
            details: [
                "credential": credential.id, "format": credential.attestationFormat,
                "attestationVerified": String(credential.attestationVerified ?? (credential.attestationFormat != "none")),
                "backupEligible": String(credential.backupEligible), "subject": credential.userHandle,
            ])
    }

    /// A passkey registration's flow completed and linked its handle: its credential stops expiring
    /// and its registration is audited under the account.
    public func identifiedFlowCompleted(_ completion: FlowCompletion) async throws {
        for credential in try await book.keep(handle: completion.identity.subject) {
            await auditRegistered(credential, app: completion.app.id, account: completion.account.id)
        }
    }

    /// What a new credential is listed as: the name a new account's person chose for it
    /// (`webauthn_username`, "the name your passkey is saved under"), else the authenticator model's,
    /// else what it is.
    static func name(typed: String?, accountID: String?, discoverable: Bool, model: String?) -> String {
        if discoverable, accountID == nil, let typed, !typed.isEmpty { return typed }
        return model ?? (discoverable ? "Passkey" : "Security key")
    }

    /// Verifies an assertion and moves the credential's counter (compare-and-swap). `accountID`: the
    /// account whose credentials may answer (a second factor); nil: any passkey.
    func assert(_ answer: ChallengeResponse, state: State, accountID: String?, app: String) async throws -> (StoredCredential, VerifiedAssertion) {
        guard let challenge = state.challenge.flatMap(Base64URL.decode) else { throw BrokerError.internalFailure("The sign-in lost its challenge.") }
        let credentialJSON = answer.values["credential"] ?? .null
        let response = try Self.refusing { () throws(WebAuthnRefusal) in try PublicKeyCredentialJSON(credentialJSON) }
        if let allowed = state.allowed, !allowed.contains(response.id) {
            throw WebAuthnRefusal(.unknownCredential, "This credential is not one of the account's.").brokerError
        }
        var refusedAsClone = false
        var verifiedAssertion: VerifiedAssertion?
        // Another node may move the counter meanwhile: the update reads the credential again and
        // verifies against what it holds then.
        let saved = try await book.update(response.id, conflict: "The credential was used at the same time elsewhere; try again.") { record in
            guard var credential = record else { throw WebAuthnRefusal(.unknownCredential, "This credential is not registered.").brokerError }
            if accountID == nil {
                // A passkey sign-in: only credentials registered as passkeys identify anyone, and a
                // passkey a signed-in person began to add counts only once that flow linked it.
                let owner = try await book.owner(credential.userHandle)?.value
                guard credential.discoverable, let owner, owner.accountID == nil else {
                    throw WebAuthnRefusal(.unknownCredential, "This credential is a second factor, not a passkey.").brokerError
                }
                let unlinked = owner.registeringFor != nil ? try await environment.accounts?.identityLink(providerID: id, subject: credential.userHandle) == nil : false
                if credential.pendingUntil != nil || unlinked {
                    throw WebAuthnRefusal(.unknownCredential, "The registration of this passkey did not complete.").brokerError
                }
            }
            let ceremony = AuthenticationCeremony(relyingParty: relyingParty, challenge: Array(challenge), userVerification: userVerification)
            let stored = AuthenticationCeremony.Stored(
                publicKey: credential.publicKeyBytes, signCount: credential.signCount, userHandle: credential.handleBytes, backupEligible: credential.backupEligible
            )
            let verified = try Self.refusing { () throws(WebAuthnRefusal) -> VerifiedAssertion in
                guard let authenticatorData = response.authenticatorData, let signature = response.signature else {
                    throw WebAuthnRefusal(.malformed, "An assertion answers with authenticatorData and signature.")
                }
                // §7.2 step 6: a sign-in that did not identify the person first needs the user handle.
                return try ceremony.verify(
                    clientDataJSON: response.clientDataJSON, authenticatorData: authenticatorData, signature: signature, userHandle: response.userHandle, stored: stored,
                    userHandleRequired: accountID == nil
                )
            }
            // The policy is told only to whoever holds the key: after the signature, before any save.
            try checkPolicy(credential)
            verifiedAssertion = verified
            refusedAsClone = verified.counterRegressed && config.counterRegression == "refuse"
            if refusedAsClone {
                // Only the regression is recorded: nothing the suspected clone reported is kept.
                credential.counterRegressions += 1
                return credential
            }
            credential.signCount = verified.signCount
            credential.backupState = verified.backupState
            credential.lastUsedAt = environment.clock.now
            credential.userVerifiedAtLastUse = verified.userVerified
            if verified.counterRegressed { credential.counterRegressions += 1 }
            return credential
        }
        guard let credential = saved, let verified = verifiedAssertion else { throw BrokerError.internalFailure("The credential was not saved.") }
        if verified.counterRegressed {
            await audit(
                "webauthn.counter_regressed", app: app, account: try? await owningAccount(accountID, credential),
                details: ["credential": credential.id, "policy": config.counterRegression])
        }
        if refusedAsClone { throw WebAuthnRefusal(.counterRegressed, "The authenticator's signature counter went back: it may be cloned.").brokerError }
        return (credential, verified)
    }

    /// The account a credential answered for: the factor's, else the passkey's (through its link), so
    /// that a suspected clone is found by searching the audit for the account.
    func owningAccount(_ accountID: String?, _ credential: StoredCredential) async throws -> String? {
        if let accountID { return accountID }
        return try await book.accountID(ofHandle: credential.userHandle)
    }

    /// The instance's policy holds at every use, not only at registration: a credential whose
    /// algorithm is no longer accepted, one registered before the instance required attested
    /// authenticators, and one of a model the metadata now reports compromised are refused.
    func checkPolicy(_ credential: StoredCredential) throws(BrokerError) {
        guard let algorithm = COSEKey.Algorithm(name: credential.algorithm), algorithms.contains(algorithm) else {
            throw WebAuthnRefusal(.algorithmNotAllowed, "This credential uses \(credential.algorithm), which this app no longer accepts.").brokerError
        }
        guard let trust else { return }
        guard credential.anchored == true else {
            throw WebAuthnRefusal(.untrustedAttestation, "This credential was registered without an attestation this app now requires; register it again.").brokerError
        }
        if let status = trust.metadata?.entries[credential.aaguid]?.status, MetadataBLOB.compromised.contains(status) {
            throw WebAuthnRefusal(.untrustedAttestation, "The FIDO metadata now reports this authenticator model as \(status).").brokerError
        }
    }

    /// Runs ceremony checks; a refusal becomes the broker's error (a wrong answer, with its reason).
    static func refusing<T>(_ body: () throws(WebAuthnRefusal) -> T) throws(BrokerError) -> T {
        do { return try body() } catch { throw error.brokerError }
    }

    func audit(_ type: String, app: String?, account: String?, details: [String: String]) async {
        do {
            try await environment.audit?.append(type, appID: app, accountID: account, details: details)
        } catch {
            environment.logger.error("The audit event could not be written", metadata: ["event": "\(type)", "error": "\(error)"])
        }
    }

    /// Deregistration: an account's credentials go with it.
    public func forget(_ departure: Departure) async throws -> [AdminChange] {
        switch departure {
        case .account(let accountID): try await book.forget(accountID: accountID)
        case .identity(let subject): try await book.forget(handle: subject)
        default: break
        }
        return []
    }
}

// The optional capabilities it implements (each found once, when the registry builds it).
extension WebAuthnProvider: AccountOperationOffering {}
extension WebAuthnProvider: AdminResourceOffering {}
extension WebAuthnProvider: Forgetting {}
extension WebAuthnProvider: IdentityCompleting {}
