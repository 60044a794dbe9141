import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Where credentials live, in the instance's storage: one record per credential (keyed by its id, so
/// that an id is registered once, on every node), one per user handle listing its credentials, and
/// one per account that has second-factor credentials. Counter updates are compare-and-swap, so two
/// nodes given assertions at once cannot both move the counter from the same value.
struct CredentialBook: Sendable {
    let storage: PluginStorage
    let accounts: (AccountDirectory)?
    let providerID: String

    static func credentialKey(_ id: String) -> String { "credential:\(id)" }
    static func handleKey(_ handle: String) -> String { "handle:\(handle)" }
    static func accountKey(_ accountID: String) -> String { "account:\(accountID)" }

    func credential(_ id: String) async throws -> PluginStorage.Versioned<StoredCredential>? {
        try await storage.get(StoredCredential.self, key: Self.credentialKey(id))
    }

    func owner(_ handle: String) async throws -> PluginStorage.Versioned<CredentialOwner>? {
        try await storage.get(CredentialOwner.self, key: Self.handleKey(handle))
    }

    /// How long an unfinished passkey registration is kept: longer than any flow lives (a flow lasts
    /// at most a day), so only an abandoned one is ever purged.
    static let pendingLifetime: TimeInterval = 2 * 86_400

    /// Stores a new credential under its handle; refuses an id registered already. A passkey
    /// (`credential.pendingUntil` set) is stored to expire, its handle with it, until its flow completes.
    func add(_ credential: StoredCredential, accountID: String?, registeringFor: String? = nil, username: String) async throws {
        guard try await storage.insert(credential, key: Self.credentialKey(credential.id), expiresAt: credential.pendingUntil) else {
            throw WebAuthnRefusal(.credentialInUse, "This credential is registered already.").brokerError
        }
        do {
            try await storage.update(
                CredentialOwner.self, key: Self.handleKey(credential.userHandle), conflict: "The credentials changed at the same time elsewhere; try again."
            ) { existing in
                guard var owner = existing else {
                    let owner = CredentialOwner(
                        credentialIDs: [credential.id], accountID: accountID, registeringFor: registeringFor, username: username, pendingUntil: credential.pendingUntil
                    )
                    return .store(owner, expiresAt: credential.pendingUntil)
                }
                owner.credentialIDs.append(credential.id)
                if owner.accountID == nil { owner.accountID = accountID }
                return .store(owner, expiresAt: owner.pendingUntil)
            }
        } catch {
            try await storage.delete(key: Self.credentialKey(credential.id))
            throw error
        }
    }

    /// Removes a credential and its entry under the handle; a handle left with no credential goes too.
    func remove(_ id: String) async throws -> StoredCredential? {
        guard let stored = try await credential(id), try await storage.delete(key: Self.credentialKey(id), version: stored.version) else { return nil }
        // The credential is gone already: a handle that keeps its id after lost races only lists a
        // credential that no longer opens (as the earlier loop, which gave up silently, left it).
        _ = try? await storage.update(CredentialOwner.self, key: Self.handleKey(stored.value.userHandle)) { existing in
            guard var owner = existing else { return .keep }
            owner.credentialIDs.removeAll { $0 == id }
            return owner.credentialIDs.isEmpty && owner.accountID == nil ? .delete : .store(owner, expiresAt: owner.pendingUntil)
        }
        return stored.value
    }

    /// The registration of a handle's passkeys completed (its identity is linked now): they and the
    /// handle stop expiring. Answers the credentials made permanent (none when nothing was pending).
    /// A compare-and-swap lost to another node (a counter moved) is read again; a record that stays
    /// pending is an error, so that the flow does not complete with a passkey that will be purged.
    func keep(handle: String) async throws -> [StoredCredential] {
        var kept: [StoredCredential] = []
        // The handle is settled last: once it is, its credentials are (a passkey sign-in reads one record).
        guard let owner = try await owner(handle), owner.value.pendingUntil != nil else { return [] }
        for id in owner.value.credentialIDs {
            if let credential = try await settle(Self.credentialKey(id), StoredCredential.self, { $0.pendingUntil }, { $0.pendingUntil = nil }) {
                kept.append(credential)
            }
        }
        _ = try await settle(Self.handleKey(handle), CredentialOwner.self, { $0.pendingUntil }, { $0.pendingUntil = nil })
        return kept
    }

    /// Clears a record's expiry; answers the record when it was pending, nil when it was not.
    private func settle<Value: Codable & Sendable>(
        _ key: String, _ type: Value.Type, _ pending: (Value) -> Date?, _ clear: (inout Value) -> Void
    ) async throws -> Value? {
        var settled: Value?
        try await storage.update(type, key: key, conflict: "The passkey changed at the same time elsewhere; try again.") { stored in
            settled = nil
            guard var value = stored, pending(value) != nil else { return .keep }
            clear(&value)
            settled = value
            return .store(value)
        }
        return settled
    }

    /// Changes a stored credential (a counter moved, a name changed) by compare-and-swap; `change`
    /// throws for a credential that is gone (and may run again when another node changed it first).
    /// Answers the credential as stored.
    @discardableResult
    func update(_ id: String, conflict: String, _ change: (StoredCredential?) async throws -> StoredCredential) async throws -> StoredCredential? {
        try await storage.update(StoredCredential.self, key: Self.credentialKey(id), conflict: conflict) { stored in
            let changed = try await change(stored)
            return .store(changed, expiresAt: changed.pendingUntil)
        }
    }

    /// The user handles of an account: its passkeys' (the identity links of this provider) and its
    /// second factor's.
    func handles(of accountID: String) async throws -> [String] {
        var handles: [String] = []
        if let links = try await accounts?.identityLinks(accountID: accountID) {
            handles += links.filter { $0.providerID == providerID }.map(\.subject)
        }
        if let own = try await storage.get(AccountHandle.self, key: Self.accountKey(accountID)) { handles.append(own.value.userHandle) }
        return handles.uniqued()
    }

    /// Every credential of an account.
    func credentials(of accountID: String) async throws -> [PluginStorage.Versioned<StoredCredential>] {
        var found: [PluginStorage.Versioned<StoredCredential>] = []
        for handle in try await handles(of: accountID) {
            for id in try await owner(handle)?.value.credentialIDs ?? [] {
                if let credential = try await credential(id) { found.append(credential) }
            }
        }
        return found
    }

    /// The account a handle belongs to: the second factor's record, else the passkey's identity link.
    func accountID(ofHandle handle: String) async throws -> String? {
        if let account = try await owner(handle)?.value.accountID { return account }
        return try await accounts?.identityLink(providerID: providerID, subject: handle)?.accountID
    }

    /// The second-factor handle of an account, made (and kept) the first time.
    func secondFactorHandle(of accountID: String) async throws -> String {
        if let own = try await storage.get(AccountHandle.self, key: Self.accountKey(accountID)) { return own.value.userHandle }
        let handle = RandomToken.make(byteCount: 32)
        if try await storage.insert(AccountHandle(userHandle: handle), key: Self.accountKey(accountID)) { return handle }
        guard let own = try await storage.get(AccountHandle.self, key: Self.accountKey(accountID)) else {
            throw BrokerError.internalFailure("The account's handle vanished.")
        }
        return own.value.userHandle
    }

    /// Every credential (for administrators).
    func all() async throws -> [StoredCredential] {
        try await storage.all(StoredCredential.self, keyPrefix: "credential:").map(\.value)
    }

    /// Deregistration: an account's handles and credentials go, its unfinished passkey registrations
    /// (whose handles no link names yet) included.
    func forget(accountID: String) async throws {
        for credential in try await credentials(of: accountID) { _ = try await remove(credential.value.id) }
        for (key, owner) in try await storage.all(CredentialOwner.self, keyPrefix: "handle:") where owner.registeringFor == accountID || owner.accountID == accountID {
            for id in owner.credentialIDs { _ = try await remove(id) }
            try await storage.delete(key: key)
        }
        try await storage.delete(key: Self.accountKey(accountID))
    }

    /// An unlinked identity: its handle and credentials go.
    func forget(handle: String) async throws {
        for id in try await owner(handle)?.value.credentialIDs ?? [] { _ = try await remove(id) }
        try await storage.delete(key: Self.handleKey(handle))
    }
}
