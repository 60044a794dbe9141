import Foundation
import GRDB

/// What one run of the SQLite migrations did.
public struct SQLiteMigrationReport: Sendable, Equatable {
    /// The migrations applied, oldest first (empty when the schema was current).
    public var applied: [String]
    /// The copy of the database taken before them; nil for a new database or when none was applied.
    public var backup: String?
}

/// The copy of an SQLite database taken before an upgrade migrates it: the way back if the new
/// version must be rolled back (an older Gatehouse refuses the migrated database). Taken with
/// SQLite's online backup, so it is consistent even while another process reads the file.
enum SQLiteUpgradeBackup {
    /// Copies the database at `path` to `<path>.before-<migration>.<UTC time>`, a file only its
    /// owner may read (it holds password hashes and sealed keys); returns the copy's path. Fails,
    /// and so stops the upgrade, when the copy cannot be made (a full disk): the database is then
    /// left as it was.
    static func take(of pool: DatabasePool, at path: String, before migration: String, now: Date = Date()) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let copy = "\(path).before-\(migration).\(formatter.string(from: now))"
        guard !FileManager.default.fileExists(atPath: copy) else {
            throw StoreOpenError("cannot back up the database before migrating it: '\(copy)' exists already; move it away and start again")
        }
        // Created empty and private first, so the copy is never readable by others, whatever the umask.
        guard FileManager.default.createFile(atPath: copy, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw StoreOpenError("cannot back up the database before migrating it: cannot create '\(copy)'; the database was not changed")
        }
        do {
            let destination = try DatabaseQueue(path: copy)
            try pool.backup(to: destination)
            try destination.close()
        } catch {
            try? FileManager.default.removeItem(atPath: copy)
            throw StoreOpenError("cannot back up the database before migrating it to '\(copy)': \(error); the database was not changed")
        }
        return copy
    }
}
