import Foundation

/// The profile-confirmation phase (`Policy.confirmProfile`): a new account's flow ends with the
/// profile the identity provider gave, for the person to confirm or edit, before any token is issued.
/// A changed address is kept only once the code sent to it comes back.
struct ProfilePhase {
    let engine: FlowEngine
    let flow: FlowRecord
    let app: App

    /// The binding of the codes that prove a changed address: only this flow's answer redeems them.
    var codeBinding: String { "profile:\(flow.id)" }

    /// Stops a flow that would complete for an account still waiting for confirmation.
    func ask(account: Account) async throws -> FlowOutcome {
        var flow = flow
        let shown = account.profile ?? AccountProfile(claims: flow.identity?.claims ?? IdentityClaims())
        flow.phase = .confirmProfile(pending: nil)
        flow.pluginState = try FlowState(encoding: shown)
        flow.challenge = Self.challenge(shown)
        try await engine.save(&flow)
        if let digest = engine.installationDigest(of: flow, app: app) {
            // The installation waits for the confirmation: its registration state says so.
            let key = RegistrationState.pendingKey(digest)
            _ = try await engine.store.deletePluginRecord(namespace: RegistrationState.namespace, key: key)
            _ = try await engine.store.insertPluginRecord(
                namespace: RegistrationState.namespace, key: key, value: Data(account.id.utf8), expiresAt: flow.expiresAt, now: engine.clock.now
            )
        }
        return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
    }

    static func challenge(_ profile: AccountProfile, codeSentTo: EmailAddress? = nil) -> Challenge {
        var fields: [String: JSONValue] = ["profile": profile.json]
        for (name, value) in [("name", profile.name), ("email", profile.email?.value), ("picture", profile.picture)] {
            if let value { fields[name] = .string(value) }
        }
        if let codeSentTo { fields["codeSentTo"] = .string(codeSentTo.masked) }
        return Challenge(type: ChallengeDescription.confirmProfile.type, fields: fields)
    }

    /// The person's answer: the profile as it stands or with their changes; the code for a changed
    /// address; or a request for another code.
    func answer(_ answer: ChallengeResponse, pending: AccountProfile?, dpopJKT: String?) async throws -> FlowOutcome {
        guard let accountID = flow.accountID, var account = try await engine.store.account(id: accountID) else {
            throw BrokerError(.flowNotFound, .notFound, "The flow's account no longer exists; start a new flow.")
        }
        // Disabled while the person was confirming.
        try account.refuseSignInIfDisabled()
        // A page sends its empty inputs as empty strings: they mean "not given".
        let code = answer.values["code"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if let pending, let address = pending.email {
            if let outcome = try await answerPendingAddress(
                pending: pending, address: address, code: code, resend: answer.values["resend"] != nil, account: &account, dpopJKT: dpopJKT)
            {
                return outcome
            }
        } else if code != nil || answer.values["resend"] != nil {
            throw BrokerError.invalidAnswer("No code was sent: only a changed email address is proven with one.")
        }
        return try await answerEdit(answer, account: &account, dpopJKT: dpopJKT)
    }

    /// A changed address waits for its code: another code, or the code that proves it (the profile is
    /// then kept); nil when the answer brings neither (the person edits again).
    func answerPendingAddress(
        pending: AccountProfile, address: EmailAddress, code: String?, resend: Bool, account: inout Account, dpopJKT: String?
    ) async throws -> FlowOutcome? {
        if resend {
            _ = try await addressVerifier().sendCode(to: address, binding: codeBinding, app: app.view(in: flow), clientIP: flow.clientIP)
            return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
        }
        guard let code else { return nil }
        let verifier = try addressVerifier()
        let proven = try await verifier.checkCode(code, binding: codeBinding)
        guard proven == address else { throw BrokerError(.invalidCode, .failedAttempt, "That code was sent to another address.") }
        let identity = ExternalIdentity(
            providerID: IdentityLink.enrolledAddressProvider(verifier.id), subject: proven.value, username: proven.value,
            claims: IdentityClaims(email: proven.value, emailVerified: true)
        )
        guard try await engine.store.addIdentityLink(identity, accountID: account.id, now: engine.clock.now) else {
            throw BrokerError(.emailInUse, .conflict, "This email address belongs to another account; use another one.")
        }
        var confirmed = pending
        confirmed.emailVerified = true
        return try await keep(confirmed, account: &account, details: ["emailChanged": "true"], dpopJKT: dpopJKT)
    }

    /// The profile as shown, or with the person's edits; a new address is proven (a code sent) before
    /// it is kept.
    func answerEdit(_ answer: ChallengeResponse, account: inout Account, dpopJKT: String?) async throws -> FlowOutcome {
        var flow = flow
        let shown = try flow.pluginState.decode(AccountProfile.self)
        var edited = shown
        if let name = answer.values["name"]?.stringValue {
            edited.name = try Self.checkedProfileText(name, field: "name", max: 256)
        }
        if let picture = answer.values["picture"]?.stringValue {
            edited.picture = try Self.checkedPicture(picture)
        }
        if let text = answer.values["email"]?.stringValue, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let address = EmailAddress(text) else { throw BrokerError.invalidAnswer("'email' is not an email address.") }
            if address != shown.email {
                // A new address is proven before it is kept.
                edited.email = address
                edited.emailVerified = false
                let delivery = try await addressVerifier().sendCode(to: address, binding: codeBinding, app: app.view(in: flow), clientIP: flow.clientIP)
                flow.phase = .confirmProfile(pending: edited)
                flow.challenge = Self.challenge(edited, codeSentTo: delivery.sentTo)
                flow.challenge.fields["codeExpiresAt"] = .string(ISO8601DateFormatter().string(from: delivery.expiresAt))
                try await engine.save(&flow)
                try await engine.audit("account.profile_code_sent", flow: flow, outcome: nil, details: ["address": address.masked])
                return .challenge(flowID: flow.id, challenge: flow.challenge, expiresAt: flow.expiresAt)
            }
        }
        return try await keep(edited, account: &account, details: ["edited": String(edited != shown)], dpopJKT: dpopJKT)
    }

    private func keep(_ profile: AccountProfile, account: inout Account, details: [String: String], dpopJKT: String?) async throws -> FlowOutcome {
        guard try await engine.store.updateAccountProfile(id: account.id, profile: profile, pending: false) else {
            throw BrokerError(.flowNotFound, .notFound, "The flow's account no longer exists; start a new flow.")
        }
        account.profile = profile
        account.profilePending = false
        if let digest = engine.installationDigest(of: flow, app: app) {
            _ = try await engine.store.deletePluginRecord(namespace: RegistrationState.namespace, key: RegistrationState.pendingKey(digest))
        }
        var flow = flow
        flow.phase = .confirmProfile(pending: nil)
        try await engine.audit("account.profile_confirmed", flow: flow, outcome: nil, details: details)
        return try await engine.complete(flow, app: app, account: account, dpopJKT: dpopJKT)
    }

    /// The authenticator that proves addresses for this app (the first in its policy that can).
    func addressVerifier() throws -> any AddressVerifying {
        if let verifier = engine.plugins.addressVerifier(for: app) { return verifier }
        throw BrokerError(.noVerifiedEmail, .forbidden, "This app has no authenticator that proves email addresses, so the address cannot be changed here.")
    }

    /// Trimmed text without control characters; empty means none.
    static func checkedProfileText(_ text: String, field: String, max: Int) throws(BrokerError) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= max, !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw BrokerError.invalidAnswer("'\(field)' must have at most \(max) characters and no control characters.")
        }
        return trimmed.isEmpty ? nil : trimmed
    }

    /// An `https` URL (a picture is shown to others; anything else is a tracking or script risk).
    static func checkedPicture(_ text: String) throws(BrokerError) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        guard let url = URLComponents(string: trimmed), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty, trimmed.count <= 2048 else {
            throw BrokerError.invalidAnswer("'picture' must be an https URL.")
        }
        return trimmed
    }
}
