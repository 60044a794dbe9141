import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GatehouseCore
import GatehouseStore

/// A throw-away SQLite database in its own temporary folder, removed with `remove()`.
public struct TemporaryStore: Sendable {
    public let folder: URL
    public let store: SQLiteStore

    public init() throws {
        self.folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString)")
        self.store = try SQLiteStore(path: folder.appendingPathComponent("gatehouse.sqlite").path)
    }

    public var path: String { store.path }

    /// Deletes the folder. Plain unlink/rmdir: Foundation's recursive `removeItem` crashed here when
    /// many parallel tests removed their folders at once.
    public func remove() {
        // Closed first: SQLite would otherwise write its -wal/-shm files back when it closes later.
        try? store.close()
        for name in (try? FileManager().contentsOfDirectory(atPath: folder.path)) ?? [] {
            unlink(folder.appendingPathComponent(name).path)
        }
        rmdir(folder.path)
    }
}

extension TemporaryStore {
    /// A second handle on the same database file, as a restarted process would open it.
    public static func reopen(_ other: TemporaryStore) throws -> TemporaryStore {
        TemporaryStore(folder: other.folder, store: try SQLiteStore(path: other.path))
    }

    init(folder: URL, store: SQLiteStore) {
        self.folder = folder
        self.store = store
    }
}
