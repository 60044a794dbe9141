import Foundation
import GRDB
import GatehouseCore
import Synchronization

extension SQLiteStore: TableRowStore {
    func exportRows(_ table: StoreTable, batch: @escaping @Sendable ([[StoreValue]]) async throws -> Void) async throws {
        let columns = StoreSchema.columns[table] ?? []
        let list = columns.map(\.name).joined(separator: ", ")
        var after: Int64 = 0
        while true {
            // Pages in rowid order: insertion order, and no page is read twice.
            let start = after
            let page = try await readLater { db in
                try Row.fetchAll(db, sql: "SELECT rowid AS copy_rowid, \(list) FROM \(table.rawValue) WHERE rowid > ? ORDER BY rowid LIMIT 500", arguments: [start])
                    .map { row in (rowid: row["copy_rowid"] as Int64, values: try columns.map { try Self.value(row[$0.name], kind: $0.kind) }) }
            }
            guard let last = page.last else { return }
            after = last.rowid
            try await batch(page.map(\.values))
        }
    }

    /// All or nothing: the rows are gathered first (a database that is copied back to SQLite fits in
    /// memory), then written in one transaction, together with the `replace` deletions.
    func importTables(
        replace: Bool, _ fill: @escaping @Sendable (_ write: @escaping @Sendable (StoreTable, [[StoreValue]]) async throws -> Void) async throws -> Void
    ) async throws {
        let gathered = Mutex<[(StoreTable, [[StoreValue]])]>([])
        try await fill { table, rows in gathered.withLock { $0.append((table, rows)) } }
        let batches = gathered.withLock { $0 }
        try await write { db in
            if replace {
                for table in StoreSchema.order.reversed() { try db.execute(sql: "DELETE FROM \(table.rawValue)") }
            }
            for (table, rows) in batches {
                let columns = StoreSchema.columns[table] ?? []
                let sql = "INSERT INTO \(table.rawValue) (\(columns.map(\.name).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
                let statement = try db.cachedStatement(sql: sql)
                for row in rows { try statement.execute(arguments: StatementArguments(row.map(Self.databaseValue))) }
            }
        }
    }

    /// Where the database lives, to refuse copying a database onto itself.
    var copyIdentity: String { "sqlite:" + URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path }

    static func value(_ value: DatabaseValue, kind: ColumnKind) throws -> StoreValue {
        if value.isNull { return .null }
        let converted: StoreValue? =
            switch kind {
            case .text: String.fromDatabaseValue(value).map(StoreValue.text)
            case .real: Double.fromDatabaseValue(value).map(StoreValue.real)
            case .integer: Int.fromDatabaseValue(value).map(StoreValue.integer)
            case .boolean: Bool.fromDatabaseValue(value).map(StoreValue.boolean)
            case .blob: Data.fromDatabaseValue(value).map(StoreValue.blob)
            }
        // A value of the wrong type is a damaged row: stop rather than copy it as NULL (which means
        // "never expires" in some columns).
        guard let converted else { throw StoreCopy.Refusal(description: "a value of the wrong type (\(value)) where \(kind) belongs; the source database needs repair") }
        return converted
    }

    static func databaseValue(_ value: StoreValue) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let number): number.databaseValue
        case .real(let number): number.databaseValue
        case .text(let text): text.databaseValue
        case .blob(let data): data.databaseValue
        case .boolean(let flag): flag.databaseValue
        }
    }
}
