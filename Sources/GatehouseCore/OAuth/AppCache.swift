import Foundation
import Synchronization

/// Apps as the hot token paths read them: from the store at most once a second per app, so that the
/// token and introspection endpoints do not read (and decode) the app on every request. A policy or
/// secret changed in the store is therefore in force on those endpoints within a second, on every
/// node. Flows always read their own app from the store; `all()` serves the lockout rule that needs
/// every app's policy on every answer. A disabled app reads as unknown here: it cannot authenticate.
public final class AppCache: Sendable {
    public static let lifetime: TimeInterval = 1

    private let store: any AppStore
    private let clock: any BrokerClock
    private let entries = Mutex([String: (app: App?, loadedAt: Date)]())
    private let list = Mutex<(apps: [App], loadedAt: Date)?>(nil)

    public init(store: any AppStore, clock: any BrokerClock) {
        self.store = store
        self.clock = clock
    }

    public func app(id: String) async throws -> App? {
        let now = clock.now
        if let entry = entries.withLock({ $0[id] }), now.timeIntervalSince(entry.loadedAt) < Self.lifetime, now >= entry.loadedAt {
            return entry.app
        }
        let app = try await store.app(id: id).flatMap { $0.disabled ? nil : $0 }
        entries.withLock { cache in
            // Unknown ids are remembered too (a flood of bogus client ids must not reach the store), but
            // the cache cannot grow without bound.
            if cache.count > 10_000 { cache.removeAll(keepingCapacity: true) }
            cache[id] = (app, now)
        }
        return app
    }

    /// Drops what this node remembers of an app, so that a change made here is in force here at once.
    public func forget(_ id: String) {
        entries.withLock { _ = $0.removeValue(forKey: id) }
        list.withLock { $0 = nil }
    }

    /// Every app, read from the store at most once a second.
    public func all() async throws -> [App] {
        let now = clock.now
        if let cached = list.withLock({ $0 }), now.timeIntervalSince(cached.loadedAt) < Self.lifetime, now >= cached.loadedAt {
            return cached.apps
        }
        let apps = try await store.apps()
        list.withLock { $0 = (apps, now) }
        return apps
    }
}
