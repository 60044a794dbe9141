import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// `PluginStorage.update`: the compare-and-swap every plugin uses instead of a loop of its own.
extension GatehouseCoreTests {
    struct Counter: Codable, Sendable, Equatable { var count: Int }

    static func storage(_ temporary: TemporaryStore) async throws -> PluginStorage {
        let test = try await broker(sealer: sealer(3), temporary: temporary)
        return PluginStorage(namespace: "counting", store: test.store, clock: test.clock, sealer: sealer(3))
    }

    @Test func updateMakesChangesAndDeletesAValueAndKeepWritesNothing() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let storage = try await Self.storage(temporary)
        #expect(try await storage.update(Counter.self, key: "c") { _ in .keep } == nil)
        #expect(try await storage.get(Counter.self, key: "c") == nil)
        #expect(try await storage.update(Counter.self, key: "c") { old in .store(Counter(count: (old?.count ?? 0) + 1)) } == Counter(count: 1))
        #expect(try await storage.update(Counter.self, key: "c") { old in .store(Counter(count: (old?.count ?? 0) + 1)) } == Counter(count: 2))
        #expect(try await storage.get(Counter.self, key: "c")?.value == Counter(count: 2))
        #expect(try await storage.update(Counter.self, key: "c") { _ in .keep } == Counter(count: 2))
        #expect(try await storage.update(Counter.self, key: "c") { _ in .delete } == nil)
        #expect(try await storage.get(Counter.self, key: "c") == nil)
    }

    @Test func updateReadsAgainWhenAnotherNodeChangedTheValueFirstSoNoWriteIsLost() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let storage = try await Self.storage(temporary)
        #expect(try await storage.insert(Counter(count: 10), key: "c"))
        var calls = 0
        let result = try await storage.update(Counter.self, key: "c") { old in
            calls += 1
            if calls == 1 {
                // Another node adds 5 between this read and this write.
                let current = try #require(try await storage.get(Counter.self, key: "c"))
                #expect(try await storage.replace(Counter(count: current.value.count + 5), key: "c", version: current.version))
            }
            return .store(Counter(count: (old?.count ?? 0) + 1))
        }
        #expect(calls == 2)
        #expect(result == Counter(count: 16))
        #expect(try await storage.get(Counter.self, key: "c")?.value == Counter(count: 16))
    }

    @Test func updateGivesUpWithConflictWhenItKeepsLosingAndAThrowingChangeWritesNothing() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let storage = try await Self.storage(temporary)
        #expect(try await storage.insert(Counter(count: 0), key: "c"))
        var calls = 0
        let refusal = await #expect(throws: BrokerError.self) {
            try await storage.update(Counter.self, key: "c") { old in
                calls += 1
                let current = try #require(try await storage.get(Counter.self, key: "c"))
                _ = try await storage.replace(Counter(count: current.value.count + 100), key: "c", version: current.version)
                return .store(Counter(count: -1))
            }
        }
        #expect(refusal?.code == .conflict)
        #expect(calls == 5)
        #expect(try await storage.get(Counter.self, key: "c")?.value == Counter(count: 500))

        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await storage.update(Counter.self, key: "c") { _ in throw Refused() } }
        #expect(try await storage.get(Counter.self, key: "c")?.value == Counter(count: 500))
    }

    @Test func updateSecretKeepsTheSecretSealedAndReplacesAValueStoredInClear() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let storage = try await Self.storage(temporary)
        try await storage.updateSecret(key: "token") { old in
            #expect(old == nil)
            return .store(Data("upstream-session-4711".utf8))
        }
        try await storage.updateSecret(key: "token") { old in
            #expect(old == Data("upstream-session-4711".utf8))
            return .store(Data("upstream-session-4712".utf8))
        }
        #expect(try await storage.secret(key: "token")?.value == Data("upstream-session-4712".utf8))
        #expect(!Self.databaseText(temporary).contains("upstream-session-471"))
        // A record an older version stored in clear reads as none, and is sealed when replaced.
        #expect(try await storage.insert(["clear": "old"], key: "legacy"))
        try await storage.updateSecret(key: "legacy") { old in
            #expect(old == nil)
            return .store(Data("sealed-now-0815".utf8))
        }
        #expect(try await storage.secret(key: "legacy")?.value == Data("sealed-now-0815".utf8))
    }
}
