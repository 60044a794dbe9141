import Foundation

extension TestDatabase {
    /// Every byte a copy of this database's files would hold: for SQLite the database, its WAL and
    /// its `-shm`; for PostgreSQL, after a checkpoint, the database's relation files (live and dead
    /// tuples alike, since nothing vacuums them first) and the write-ahead log. Tests search it for
    /// secrets that must never be stored in clear.
    public func bytesAtRest() async throws -> Data {
        var files: [URL] = []
        if let sqlite {
            files = ["", "-wal", "-shm"].map { URL(fileURLWithPath: sqlite.path + $0) }
        } else if let postgres {
            let server = PostgresServer.shared
            _ = try await server.psql("CHECKPOINT", database: postgres.database)
            let oid = try await server.psql("SELECT oid FROM pg_database WHERE datname = current_database()", database: postgres.database)
            let data = server.folder.appendingPathComponent("data")
            for folder in [data.appendingPathComponent("base/\(oid)"), data.appendingPathComponent("pg_wal")] {
                for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                    files.append(folder.appendingPathComponent(name))
                }
            }
        }
        var bytes = Data()
        for file in files {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            bytes.append(try Data(contentsOf: file))
        }
        return bytes
    }
}
