import Foundation

/// Pushed authorization requests (RFC 9126): a client sends its authorization request straight to
/// the broker (authenticated, so a confidential client's parameters never travel through the
/// browser and cannot be changed there), and gets a `request_uri` the browser carries instead.
/// The checked parameters are kept in the store for `lifetime` seconds under the digest of the
/// reference, for every node, and used once.
public struct PushedAuthorizations: Sendable {
    let store: any PluginDataStore
    let clock: any BrokerClock
    /// The store namespace (a colon: no plugin instance id has one).
    static let namespace = "gatehouse:par"
    /// RFC 9126 section 2.2: the URN prefix of the references handed out.
    public static let prefix = "urn:ietf:params:oauth:request_uri:"
    /// How long a pushed request waits for its browser (RFC 9126 section 2.2: short; FAPI 2.0: under 600 s).
    public static let lifetime = 90

    public init(store: any PluginDataStore, clock: any BrokerClock) {
        self.store = store
        self.clock = clock
    }

    struct Pushed: Codable {
        var clientID: String
        var parameters: [String: String]
    }

    /// Keeps checked `parameters` of `clientID`; answers the reference.
    func keep(_ parameters: [String: String], clientID: String) async throws -> String {
        let reference = Self.prefix + RandomToken.make()
        let now = clock.now
        let value = try JSONEncoder().encode(Pushed(clientID: clientID, parameters: parameters))
        guard
            try await store.insertPluginRecord(
                namespace: Self.namespace, key: SecretDigest.sha256Hex(reference), value: value, expiresAt: now.addingTimeInterval(TimeInterval(Self.lifetime)), now: now
            )
        else { throw BrokerError.internalFailure("A pushed request's reference was drawn twice.") }
        return reference
    }

    /// The parameters behind `reference`, for `clientID` only, once: the first request to take them
    /// (on any node) gets them; an unknown, expired, used or another client's reference is
    /// `invalid_request_uri`.
    func take(_ reference: String, clientID: String) async throws -> [String: String] {
        let refused = BrokerError(.invalidRequestURI, .badRequest, "The request_uri is not known, has expired or was used; push the request again.")
        guard reference.hasPrefix(Self.prefix) else { throw refused }
        let key = SecretDigest.sha256Hex(reference)
        guard let record = try await store.pluginRecord(namespace: Self.namespace, key: key, now: clock.now),
            let pushed = try? JSONDecoder().decode(Pushed.self, from: record.value), pushed.clientID == clientID
        else { throw refused }
        guard try await store.deletePluginRecord(namespace: Self.namespace, key: key, expectedVersion: record.version) else { throw refused }
        return pushed.parameters
    }
}
