import Foundation
import GatehousePluginKit
import GatehouseSupport
import Synchronization

/// Keeps a provider's open connections for reuse and runs every directory call on a bounded set of
/// threads: at most `maxConnections` calls at once, each waiting at most twice the operation timeout
/// for its turn. After the directory is found unreachable, calls fail at once for a moment instead of each
/// waiting for its own timeout; then the next call tries again, so sign-ins recover by themselves.
final class LDAPConnectionPool: Sendable {
    /// How long calls fail fast after the directory was unreachable. Two seconds: long enough that
    /// the caller right after a timed-out one is refused at once even on a busy machine, short enough
    /// that sign-ins recover moments after the directory does.
    static let failFastInterval: TimeInterval = 2

    private struct Outage {
        /// Monotonic: a wall-clock step must not lengthen or cut the window.
        var until: ContinuousClock.Instant
        var failure: LDAPFailure
    }

    let settings: LDAPConnectionSettings
    private let limit: ConcurrencyLimit
    private let idle = Mutex<[LDAPConnection]>([])
    private let outage = Mutex<Outage?>(nil)

    init(settings: LDAPConnectionSettings, maxConnections: Int) {
        self.settings = settings
        self.limit = ConcurrencyLimit(limit: maxConnections)
    }

    /// Runs `body` on a pooled connection, off the server's threads.
    func run<T: Sendable>(_ body: @escaping @Sendable (LDAPConnection) throws(LDAPFailure) -> T) async throws(LDAPFailure) -> T {
        if let failure = currentOutage { throw failure }
        do {
            return try await limit.run(waitingAtMost: TimeInterval(2 * settings.operationTimeout)) {
                // The directory may have been found unreachable while this call waited for its turn.
                if let failure = self.currentOutage { throw failure }
                do {
                    return try await BlockingWork.run { try self.runBlocking(body) }
                } catch let failure as LDAPFailure where failure.connectionLost {
                    // Noted again now that the failure reaches the caller: closing the dead
                    // connections and getting back from the blocking thread can take a while on a busy
                    // machine, and the next caller must still find the window open.
                    self.noteOutage(failure)
                    throw failure
                }
            }
        } catch let failure as LDAPFailure {
            throw failure
        } catch {
            throw LDAPFailure(
                stage: .connect, code: LDAPResultCode.timeout, message: "all connections to the directory stayed busy for \(2 * settings.operationTimeout) s")
        }
    }

    /// A fresh connection, outside the pool (for step-by-step diagnosis).
    func openUnpooled() async throws(LDAPFailure) -> LDAPConnection {
        let settings = settings
        do {
            return try await BlockingWork.run { try LDAPConnection.open(settings) }
        } catch let failure as LDAPFailure {
            throw failure
        } catch {
            throw LDAPFailure(stage: .connect, code: LDAPResultCode.connectError, message: "\(error)")
        }
    }

    /// The last unreachability, while calls still fail fast because of it.
    var currentOutage: LDAPFailure? {
        outage.withLock { $0.flatMap { $0.until > .now ? $0.failure : nil } }
    }

    /// Kept connections idle longer than this are closed rather than reused: firewalls and load
    /// balancers drop idle flows silently, and a dead connection would only time out.
    static let maxIdle: TimeInterval = 60

    private func runBlocking<T>(_ body: (LDAPConnection) throws(LDAPFailure) -> T) throws(LDAPFailure) -> T {
        let reused = takeReusable()
        do {
            let connection: LDAPConnection
            if let reused { connection = reused } else { connection = try LDAPConnection.open(settings) }
            return try use(connection, body)
        } catch  where error.code == LDAPResultCode.serverDown && reused != nil {
            // A kept connection can have died with a directory restart; so have its siblings. (Not
            // after a timeout: a directory that stalls would only make the caller wait twice.)
            _ = takeAllIdle()
            do {
                return try use(LDAPConnection.open(settings), body)
            } catch {
                if error.connectionLost { noteOutage(error) }
                throw error
            }
        } catch {
            if error.connectionLost {
                // Its idle siblings are likely no better.
                _ = takeAllIdle()
                noteOutage(error)
            }
            throw error
        }
    }

    /// The most recently used idle connection. Connections idle too long are taken out with it and
    /// closed when this returns: closing one unbinds over the network, which must not happen while
    /// holding the lock every call needs.
    private func takeReusable() -> LDAPConnection? {
        let (reused, expired) = idle.withLock { connections -> (LDAPConnection?, [LDAPConnection]) in
            let now = Date()
            let expired = connections.filter { now.timeIntervalSince($0.lastUsed) > Self.maxIdle }
            connections.removeAll { now.timeIntervalSince($0.lastUsed) > Self.maxIdle }
            return (connections.popLast(), expired)
        }
        _ = expired
        return reused
    }

    /// Every idle connection, taken out of the pool; they close when the caller lets them go, outside the lock.
    private func takeAllIdle() -> [LDAPConnection] {
        idle.withLock { connections in
            defer { connections = [] }
            return connections
        }
    }

    /// Runs `body` and keeps the connection when it is still good.
    private func use<T>(_ connection: LDAPConnection, _ body: (LDAPConnection) throws(LDAPFailure) -> T) throws(LDAPFailure) -> T {
        do {
            let value = try body(connection)
            keep(connection)
            outage.withLock { $0 = nil }
            return value
        } catch {
            if !error.connectionLost { keep(connection) }
            throw error
        }
    }

    private func keep(_ connection: LDAPConnection) {
        connection.lastUsed = Date()
        idle.withLock { connections in
            if connections.count < limit.limit { connections.append(connection) }
        }
    }

    private func noteOutage(_ failure: LDAPFailure) {
        outage.withLock { $0 = Outage(until: .now + .seconds(Self.failFastInterval), failure: failure) }
    }
}
