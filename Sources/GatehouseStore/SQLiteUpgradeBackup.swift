import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

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
    /// owner may read (it holds password hashes and sealed keys); returns the copy's path. The copy
    /// is written as `<copy>.partial` and renamed only once complete and on disk, so a copy under
    /// the final name is always whole, even after a crash or a kill mid-copy (an earlier attempt's
    /// `.partial` files are removed first). Fails, and so stops the upgrade, when the copy cannot be
    /// made (a full disk): the database is then left as it was.
    static func take(of pool: DatabasePool, at path: String, before migration: String, now: Date = Date()) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let copy = "\(path).before-\(migration).\(formatter.string(from: now))"
        let partial = copy + ".partial"
        removeAbandonedPartials(of: path)
        guard !FileManager.default.fileExists(atPath: copy) else {
            throw StoreOpenError("cannot back up the database before migrating it: '\(copy)' exists already; move it away and start again", migrationFailed: true)
        }
        // Created here, exclusively and private, so the copy is never readable by others whatever the umask.
        let descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreOpenError(
                "cannot back up the database before migrating it: cannot create '\(partial)': \(String(cString: strerror(errno))); the database was not changed",
                migrationFailed: true)
        }
        close(descriptor)
        do {
            let destination = try DatabaseQueue(path: partial)
            try pool.backup(to: destination)
            try destination.close()
            try sync(partial)
            guard rename(partial, copy) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            try sync(URL(fileURLWithPath: copy).deletingLastPathComponent().path)
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw StoreOpenError("cannot back up the database before migrating it to '\(copy)': \(error); the database was not changed", migrationFailed: true)
        }
        return copy
    }

    /// Writes a file's (or a folder's) contents to disk.
    private static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Copies an earlier start began and never finished.
    private static func removeAbandonedPartials(of path: String) {
        let url = URL(fileURLWithPath: path)
        let prefix = url.lastPathComponent + ".before-"
        let folder = url.deletingLastPathComponent()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(prefix) && name.hasSuffix(".partial") {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }
}
