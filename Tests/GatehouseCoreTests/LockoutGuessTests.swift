import Foundation
import GatehouseCore
import GatehouseTesting
import Testing

/// `LockoutBook.guess`: the one call that does a factor's lockout bookkeeping.
extension GatehouseCoreTests {
    static let guessRule = LockoutRule(
        maxFailures: 2, failureWindow: Seconds(600), lockoutDuration: Seconds(60), maxLockoutDuration: Seconds(600), permanentAfterLockouts: nil)

    static func lockouts(_ temporary: TemporaryStore) async throws -> (LockoutBook, TestBroker) {
        let test = try await broker(sealer: sealer(4), temporary: temporary)
        return (LockoutBook(namespace: "factor", store: test.store, audit: test.store, clock: test.clock), test)
    }

    @Test func wrongGuessesLockAtTheLimitAndTheLockingOneCountsAsAWrongAnswer() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let (book, _) = try await Self.lockouts(temporary)
        let wrong = BrokerError(.invalidCode, .failedAttempt, "wrong")
        // The third is refused before it is judged: a locked key, not a wrong answer.
        for (expected, judged) in [(ErrorCode.invalidCode, true), (.lockedOut, true), (.lockedOut, false)] {
            let error = await #expect(throws: BrokerError.self) {
                try await book.guess("k", what: "This key", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in .wrong(wrong) }
            }
            #expect(error?.code == expected)
            #expect(error?.isWrongAnswer == judged)
        }
        // Locked: a right answer is not even evaluated.
        var evaluated = false
        await #expect(throws: BrokerError.self) {
            try await book.guess("k", what: "This key", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in
                evaluated = true
                return .right(1)
            }
        }
        #expect(!evaluated)
    }

    @Test func aRightGuessForgetsFailuresAndAVoidOrThrowingGuessIsGivenBack() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let (book, _) = try await Self.lockouts(temporary)
        let wrong = BrokerError(.invalidCode, .failedAttempt, "wrong")
        await #expect(throws: BrokerError.self) {
            try await book.guess("k", what: "K", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in .wrong(wrong) }
        }
        #expect(try await book.guess("k", what: "K", rule: Self.guessRule) { .right(7) } == 7)
        // The failure was forgotten: one more wrong guess is again below the limit.
        let again = await #expect(throws: BrokerError.self) {
            try await book.guess("k", what: "K", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in .wrong(wrong) }
        }
        #expect(again?.code == .invalidCode)
        // Given back: neither a void guess nor a throwing one counts, so the next wrong one is still not the lock.
        await #expect(throws: BrokerError.self) {
            try await book.guess("k", what: "K", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in
                .void(BrokerError(.codeExpired, .badRequest, "used"))
            }
        }
        struct Broken: Error {}
        await #expect(throws: Broken.self) { try await book.guess("k", what: "K", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in throw Broken() } }
        let last = await #expect(throws: BrokerError.self) {
            try await book.guess("k", what: "K", rule: Self.guessRule) { () async throws -> LockoutBook.Guess<Int> in .wrong(wrong) }
        }
        #expect(last?.code == .lockedOut)
    }

    @Test func oneLockPerGuessForgetsTheLaterKeysCountOnceTheFirstLocks() async throws {
        let temporary = try TemporaryStore()
        defer { temporary.remove() }
        let (book, test) = try await Self.lockouts(temporary)
        let wrong = BrokerError(.invalidPIN, .failedAttempt, "wrong")
        let keys = [(local: "account:a", what: "This account's PIN"), (local: "device:d", what: "This device's PIN")]
        for _ in 0..<2 {
            await #expect(throws: BrokerError.self) {
                try await book.guess(keys, rule: Self.guessRule, oneLockPerGuess: true) { () async throws -> LockoutBook.Guess<Void> in .wrong(wrong) }
            }
        }
        let counters = try await test.store.lockedCounters(now: test.clock.now).map(\.key)
        #expect(counters == ["factor:account:a"])
        #expect(try await test.store.attemptCounter(key: "factor:device:d")?.failures == 0)
    }
}
