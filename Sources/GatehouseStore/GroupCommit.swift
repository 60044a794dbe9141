import Foundation
import GRDB
import Synchronization

/// Group commit for the SQLite store: writes that arrive while a commit is under way wait for it,
/// then go together in one transaction with one sync to disk, each in its own savepoint. Every writer
/// is answered only after the commit that holds its write, so `durability: full` keeps its promise
/// (nothing acknowledged is lost in a power cut) while the syncs per second no longer cap the writes
/// per second: at 32 concurrent refresh grants one sync covers the dozen or so that gathered.
///
/// A write that throws rolls back its own savepoint only and gets its own error; the others in the
/// batch are unaffected. If SQLite rolls back the whole transaction (a full disk, an I/O error), or the
/// commit fails, every write of the batch gets that error, and none of them is in the database.
final class GroupCommit: Sendable {
    private let pool: DatabasePool
    private let state = Mutex(State())

    private struct State {
        var queue: [Job] = []
        /// A drain is queued or running on the writer; new writes join its next batch.
        var draining = false
        var transactions = 0
    }

    /// How many transactions were committed or rolled back so far (the tests compare it with the
    /// number of writes).
    var transactions: Int { state.withLock { $0.transactions } }

    /// One write: touched only on the writer's queue once enqueued.
    private final class Job: @unchecked Sendable {
        let perform: (Database) throws -> Void
        /// Called once, after the commit (nil) or with the error that kept the write out.
        let complete: ((any Error)?) -> Void

        init(perform: @escaping (Database) throws -> Void, complete: @escaping ((any Error)?) -> Void) {
            self.perform = perform
            self.complete = complete
        }
    }

    /// The value a write produced, held until its commit is done.
    private final class Outcome<T>: @unchecked Sendable {
        var value: T?
    }

    init(pool: DatabasePool) {
        self.pool = pool
    }

    /// Runs `body` in a transaction shared with the writes that gathered meanwhile; returns its value
    /// once that transaction is committed.
    ///
    /// `body` must let every database error out (no `try?`, no catch that carries on): after an error
    /// that made SQLite abort the transaction, a statement the body still ran would run outside any
    /// transaction and be kept, although the batch fails.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let outcome = Outcome<T>()
            let job = Job(
                perform: { db in outcome.value = try body(db) },
                complete: { error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let value = outcome.value {
                        continuation.resume(returning: value)
                    } else {
                        continuation.resume(throwing: DatabaseError(message: "a grouped write finished without a value"))
                    }
                }
            )
            let start = state.withLock { state in
                state.queue.append(job)
                guard !state.draining else { return false }
                state.draining = true
                return true
            }
            if start { pool.asyncWriteWithoutTransaction { db in self.drain(db) } }
        }
    }

    /// Commits batch after batch until no write is waiting, giving the writer back every
    /// `batchesPerTurn` batches (and queueing itself again) so that under a steady stream of writes a
    /// barrier (VACUUM) or `close()` still gets its turn.
    private func drain(_ db: Database) {
        for _ in 0..<Self.batchesPerTurn {
            let batch = state.withLock { state in
                let jobs = state.queue
                state.queue.removeAll(keepingCapacity: true)
                if jobs.isEmpty { state.draining = false } else { state.transactions += 1 }
                return jobs
            }
            if batch.isEmpty { return }
            commit(batch, db)
        }
        pool.asyncWriteWithoutTransaction { db in self.drain(db) }
    }

    static let batchesPerTurn = 32

    private func commit(_ batch: [Job], _ db: Database) {
        var errors = [(any Error)?](repeating: nil, count: batch.count)
        do {
            // Cached statements: compiling BEGIN, COMMIT and the savepoints anew for every batch cost
            // more than running them (GRDB's `beginTransaction` and `inSavepoint` compile each time).
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
            if batch.count == 1 {
                // Alone, the write needs no savepoint: its error rolls back the transaction.
                try batch[0].perform(db)
            } else {
                for (index, job) in batch.enumerated() {
                    do {
                        try db.cachedStatement(sql: "SAVEPOINT grouped_write").execute()
                        try job.perform(db)
                        try db.cachedStatement(sql: "RELEASE SAVEPOINT grouped_write").execute()
                    } catch {
                        errors[index] = error
                        // SQLite ended the whole transaction: nothing of the batch holds.
                        guard db.isInsideTransaction else { throw error }
                        // Undo this write only; the release takes the savepoint off the stack.
                        try db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT grouped_write").execute()
                        try db.cachedStatement(sql: "RELEASE SAVEPOINT grouped_write").execute()
                    }
                }
            }
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            if db.isInsideTransaction { try? db.rollback() }
            for (index, job) in batch.enumerated() { job.complete(errors[index] ?? error) }
            return
        }
        for (index, job) in batch.enumerated() { job.complete(errors[index]) }
    }
}
