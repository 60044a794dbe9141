import Foundation

/// How flows are stored: each field under its name, and each phase with its own state. A flow stored
/// by a version before the phases carried their state (its `recovery`, `pendingProfile` and
/// `suspendedFactor` beside the phase) reads into the phase it belongs to, so that it completes after
/// an upgrade, as does one with a `suspendedProvider` (now its `handOff`). A flow stored while the
/// engine ran a plugin's sub-flow itself (`legacySubFlow`: the plugin's state, its provider, outcome
/// and choice, and a choice phase of its own) reads into the generic form: waiting for the choice,
/// the plugin's challenge with its state; past it, a hand-over whose state is the same value.
extension FlowRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case id, appID, providerID, purpose, stateless, scopes, phase, pluginState, challenge, identity, accountID, accountCreated, methods, failedAttempts, clientIP,
            authorization, returnURI, codeChallenge, returnCodeDigest, signedInAccountID, signInKeyID, handOff, installationID, language, enrolling, createdAt, expiresAt,
            version
        /// Written before the phases carried their state.
        case legacyRecovery = "recovery", legacyPendingProfile = "pendingProfile", legacySuspendedFactor = "suspendedFactor"
        /// Written before hand-offs carried their mode.
        case legacySuspendedProvider = "suspendedProvider"
        /// Written while the engine ran a plugin's sub-flow itself (version 11 and before).
        case legacySubFlow = "activation"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        appID = try container.decode(String.self, forKey: .appID)
        purpose = try container.decode(FlowPurpose.self, forKey: .purpose)
        stateless = try container.decode(Bool.self, forKey: .stateless)
        scopes = try container.decode([String].self, forKey: .scopes)
        let legacyChoice = try container.nestedContainer(keyedBy: Phase.CodingKeys.self, forKey: .phase).contains(.legacyChoice)
        phase = legacyChoice ? .identify : try container.decode(Phase.self, forKey: .phase)
        // Stored flat, as every version wrote it: the parts are filled field by field.
        turn = PluginTurn(
            providerID: try container.decode(String.self, forKey: .providerID), pluginState: try container.decode(FlowState.self, forKey: .pluginState),
            challenge: try container.decode(Challenge.self, forKey: .challenge)
        )
        progress = FlowProgress()
        origin = FlowOrigin()
        createdAt = try container.decode(Date.self, forKey: .createdAt)
        expiresAt = try container.decode(Date.self, forKey: .expiresAt)
        version = try container.decode(Int.self, forKey: .version)
        identity = try container.decodeIfPresent(ExternalIdentity.self, forKey: .identity)
        accountID = try container.decodeIfPresent(String.self, forKey: .accountID)
        accountCreated = try container.decodeIfPresent(Bool.self, forKey: .accountCreated)
        methods = try container.decode([String].self, forKey: .methods)
        failedAttempts = try container.decode(Int.self, forKey: .failedAttempts)
        clientIP = try container.decodeIfPresent(String.self, forKey: .clientIP)
        authorization = try container.decodeIfPresent(BrowserAuthorization.self, forKey: .authorization)
        returnURI = try container.decodeIfPresent(String.self, forKey: .returnURI)
        codeChallenge = try container.decodeIfPresent(String.self, forKey: .codeChallenge)
        returnCodeDigest = try container.decodeIfPresent(String.self, forKey: .returnCodeDigest)
        signedInAccountID = try container.decodeIfPresent(String.self, forKey: .signedInAccountID)
        enrolling = try container.decodeIfPresent(Bool.self, forKey: .enrolling)
        signInKeyID = try container.decodeIfPresent(String.self, forKey: .signInKeyID)
        handOff = try container.decodeIfPresent(HandOff.self, forKey: .handOff) ?? container.decodeIfPresent(HandOff.self, forKey: .legacySuspendedProvider)
        if let subFlow = try container.decodeIfPresent(JSONValue.self, forKey: .legacySubFlow) {
            // The plugin's state was its own Codable value, stored as it is: it goes back to it.
            guard let fields = subFlow.objectValue, let owner = fields["providerID"]?.stringValue, let outcome = fields["outcome"] else {
                throw BrokerError(.flowNotFound, .notFound, "This flow was started by an earlier version of the broker; start a new one.")
            }
            let state = FlowState(data: Data(subFlow.serialized()))
            if legacyChoice {
                pluginState = state
            } else {
                var summary: [String: JSONValue] = ["outcome": outcome]
                if let choice = fields["choice"], choice != .null { summary["choice"] = choice }
                handOff = HandOff(
                    providerID: owner, state: state, mode: .adopts, annotations: [CodingKeys.legacySubFlow.stringValue: .object(summary)],
                    approved: phase != .identify
                )
            }
        } else if legacyChoice {
            throw BrokerError(.flowNotFound, .notFound, "This flow was started by an earlier version of the broker; start a new one.")
        }
        installationID = try container.decodeIfPresent(String.self, forKey: .installationID)
        language = try container.decodeIfPresent(String.self, forKey: .language)
        switch phase {
        case .recovery:
            // The previous version kept the recovery beside the phase (and always wrote it with it).
            if let recovery = try container.decodeIfPresent(PasswordRecovery.self, forKey: .legacyRecovery) { phase = .recovery(recovery) }
        case .confirmProfile(nil):
            if let pending = try container.decodeIfPresent(AccountProfile.self, forKey: .legacyPendingProfile) { phase = .confirmProfile(pending: pending) }
        case .factor(let id, nil):
            if let resumes = try container.decodeIfPresent(SuspendedFactor.self, forKey: .legacySuspendedFactor) {
                phase = .factor(authenticatorID: id, resumes: resumes)
            }
        default:
            break
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(appID, forKey: .appID)
        try container.encode(providerID, forKey: .providerID)
        try container.encode(purpose, forKey: .purpose)
        try container.encode(stateless, forKey: .stateless)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(phase, forKey: .phase)
        try container.encode(pluginState, forKey: .pluginState)
        try container.encode(challenge, forKey: .challenge)
        try container.encodeIfPresent(identity, forKey: .identity)
        try container.encodeIfPresent(accountID, forKey: .accountID)
        try container.encodeIfPresent(accountCreated, forKey: .accountCreated)
        try container.encode(methods, forKey: .methods)
        try container.encode(failedAttempts, forKey: .failedAttempts)
        try container.encodeIfPresent(clientIP, forKey: .clientIP)
        try container.encodeIfPresent(authorization, forKey: .authorization)
        try container.encodeIfPresent(returnURI, forKey: .returnURI)
        try container.encodeIfPresent(codeChallenge, forKey: .codeChallenge)
        try container.encodeIfPresent(returnCodeDigest, forKey: .returnCodeDigest)
        try container.encodeIfPresent(signedInAccountID, forKey: .signedInAccountID)
        try container.encodeIfPresent(enrolling, forKey: .enrolling)
        try container.encodeIfPresent(signInKeyID, forKey: .signInKeyID)
        try container.encodeIfPresent(handOff, forKey: .handOff)
        try container.encodeIfPresent(installationID, forKey: .installationID)
        try container.encodeIfPresent(language, forKey: .language)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(version, forKey: .version)
    }
}

/// A phase as stored: under its case's name, its state beside (the shape earlier versions wrote, so
/// that their flows read).
extension FlowRecord.Phase: Codable {
    enum CodingKeys: String, CodingKey {
        case chooseProvider, identify, factor, confirmProfile, consent, recovery
        /// A phase of a plugin's sub-flow the engine once ran itself (version 11 and before).
        case legacyChoice = "activationChoice"
    }
    enum StateKeys: String, CodingKey { case authenticatorID, resumes, pending, recovery }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "a flow phase names one case"))
        }
        // A phase's state is a mapping under its name (empty for phases without state).
        let state = try container.nestedContainer(keyedBy: StateKeys.self, forKey: key)
        switch key {
        case .chooseProvider: self = .chooseProvider
        case .identify: self = .identify
        case .legacyChoice:
            throw BrokerError(.flowNotFound, .notFound, "This flow was started by an earlier version of the broker; start a new one.")
        case .consent: self = .consent
        case .factor:
            self = .factor(
                authenticatorID: try state.decode(String.self, forKey: .authenticatorID), resumes: try state.decodeIfPresent(SuspendedFactor.self, forKey: .resumes)
            )
        case .confirmProfile:
            self = .confirmProfile(pending: try state.decodeIfPresent(AccountProfile.self, forKey: .pending))
        case .recovery:
            // Before the phases carried their state, the recovery was stored beside the phase; the
            // flow's decoder puts it here. (Without either, which no version wrote, it would start
            // again from the username: a code or a new password needs the subject it does not have.)
            self = .recovery(try state.decodeIfPresent(PasswordRecovery.self, forKey: .recovery) ?? PasswordRecovery(step: .username))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .chooseProvider: _ = container.nestedContainer(keyedBy: StateKeys.self, forKey: .chooseProvider)
        case .identify: _ = container.nestedContainer(keyedBy: StateKeys.self, forKey: .identify)
        case .consent: _ = container.nestedContainer(keyedBy: StateKeys.self, forKey: .consent)
        case .factor(let id, let resumes):
            var state = container.nestedContainer(keyedBy: StateKeys.self, forKey: .factor)
            try state.encode(id, forKey: .authenticatorID)
            try state.encodeIfPresent(resumes, forKey: .resumes)
        case .confirmProfile(let pending):
            var state = container.nestedContainer(keyedBy: StateKeys.self, forKey: .confirmProfile)
            try state.encodeIfPresent(pending, forKey: .pending)
        case .recovery(let recovery):
            var state = container.nestedContainer(keyedBy: StateKeys.self, forKey: .recovery)
            try state.encode(recovery, forKey: .recovery)
        }
    }
}
