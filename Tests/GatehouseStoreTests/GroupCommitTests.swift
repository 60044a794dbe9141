import Foundation
import GatehouseCore
@testable import GatehouseStore
import GatehouseTesting
import Testing

/// SQLite's group commit: concurrent writes share transactions, each write keeps its own outcome,
/// and a refused write takes nothing else with it.
extension GatehouseStoreTests {
    @Test func concurrentSQLiteWritesShareCommitsAndEachKeepsItsOwnOutcome() async throws {
        try await TestDatabase.with(.sqlite) { database in
            let store = try #require(database.store as? SQLiteStore)
            let owner = try await account(store)
            let before = store.commits.transactions
            // 120 writes at once: 100 new tokens, and 20 that all use the digest "twin" (one may win;
            // the others break the unique key and must fail alone).
            let outcomes = try await concurrently(120, on: [store]) { store, index -> Bool in
                let digest = index % 6 == 0 ? "twin" : "rt-\(index)"
                do {
                    try await store.insertRefreshToken(refreshToken(digest, family: "f-\(index)", account: owner.id))
                    return true
                } catch {
                    return false
                }
            }
            #expect(outcomes.filter { $0 }.count == 101)
            let transactions = store.commits.transactions - before
            #expect(transactions < 120, "\(transactions) transactions for 120 concurrent writes: nothing was grouped")
            for index in 0..<120 where index % 6 != 0 {
                #expect(try await store.refreshToken(digest: "rt-\(index)") != nil)
            }
            #expect(try await store.refreshToken(digest: "twin") != nil)
            // Reopened from the file: what was acknowledged was committed.
            let reopened = try SQLiteStore(path: store.path)
            defer { try? reopened.close() }
            #expect(try await reopened.refreshToken(digest: "rt-1") != nil)
        }
    }
}
