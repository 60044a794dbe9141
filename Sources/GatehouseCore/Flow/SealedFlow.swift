import Foundation

/// A flow as the store keeps it: the few columns the store queries by, and the whole record sealed
/// under the key-encryption key. Flow state holds what a plugin keeps between steps and the last
/// challenge it sent, and those can be secrets (an authenticator app's secret being enrolled, its
/// recovery codes, an upstream provider's PKCE verifier): sealed, no copy of the database files (the
/// SQLite WAL and free pages, PostgreSQL's dead tuples) shows them after the flow is gone.
public struct SealedFlow: Sendable, Hashable {
    public var id: String
    public var appID: String
    /// `gh-kek1:…`: the record's JSON sealed for the row `flow:<id>`. Flows written before flows were
    /// sealed are plain JSON, and still read.
    public var payload: String
    public var expiresAt: Date
    public var version: Int

    public init(id: String, appID: String, payload: String, expiresAt: Date, version: Int) {
        self.id = id
        self.appID = appID
        self.payload = payload
        self.expiresAt = expiresAt
        self.version = version
    }

    /// The row and version a flow's payload is sealed for: a payload moved to another flow's row, or
    /// an older payload of the same flow put back, does not open.
    static func context(_ id: String, version: Int) -> String { "flow:\(id):\(version)" }

    /// Seals `record`.
    public init(_ record: FlowRecord, sealer: SecretSealer) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try encoder.encode(record)
        self.init(
            id: record.id, appID: record.appID, payload: try sealer.seal(json, context: Self.context(record.id, version: record.version)),
            expiresAt: record.expiresAt, version: record.version
        )
    }

    /// The record, opened; its version is the row's.
    public func open(with sealer: SecretSealer) throws -> FlowRecord {
        let json = SecretSealer.isSealed(payload) ? try sealer.open(payload, context: Self.context(id, version: version)) : Data(payload.utf8)
        var record = try JSONDecoder().decode(FlowRecord.self, from: json)
        record.version = version
        return record
    }
}

extension FlowStore {
    /// Stores a new flow, sealed.
    public func insertFlow(_ flow: FlowRecord, sealer: SecretSealer) async throws {
        try await insertFlow(SealedFlow(flow, sealer: sealer))
    }

    /// The flow if it exists and has not expired at `now`, opened. A payload that does not open (its
    /// key-encryption key was removed while it was open, or the row was altered) or does not read is
    /// a flow that is not there: the person starts again (and learns nothing about the keys).
    public func flow(id: String, now: Date, sealer: SecretSealer) async throws -> FlowRecord? {
        guard let sealed = try await sealedFlow(id: id, now: now) else { return nil }
        do {
            return try sealed.open(with: sealer)
        } catch let error as BrokerError {
            throw error
        } catch {
            throw BrokerError(.flowNotFound, .notFound, "This flow can no longer be read; start a new one.").because("flow_unreadable: \(error)")
        }
    }

    /// Replaces the flow if its stored version is still `flow.version`, sealed; the stored version
    /// becomes `flow.version + 1`. False when another writer got there first or the flow is gone.
    public func updateFlow(_ flow: FlowRecord, sealer: SecretSealer) async throws -> Bool {
        var next = flow
        next.version = flow.version + 1
        return try await updateFlow(SealedFlow(next, sealer: sealer), expectedVersion: flow.version)
    }
}
