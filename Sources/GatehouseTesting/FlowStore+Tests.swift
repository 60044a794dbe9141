import Foundation
import GatehouseCore

/// Flows read and written with the test brokers' key-encryption key (`SecretSealer.forTests`), as
/// their engines do: a test looks into the flow a step left behind.
extension FlowStore {
    public func insertFlow(_ flow: FlowRecord) async throws {
        try await insertFlow(flow, sealer: .forTests)
    }

    public func flow(id: String, now: Date) async throws -> FlowRecord? {
        try await flow(id: id, now: now, sealer: .forTests)
    }

    public func updateFlow(_ flow: FlowRecord) async throws -> Bool {
        try await updateFlow(flow, sealer: .forTests)
    }
}
