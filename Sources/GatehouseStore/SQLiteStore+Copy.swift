import Foundation
import GRDB
import GatehouseCore

extension SQLiteStore: TableRowStore {
    func exportRows(_ table: StoreTable, batch: @escaping @Sendable ([[StoreValue]]) async throws -> Void) async throws {
        let columns = StoreSchema.columns[table] ?? []
        let list = columns.map(\.name).joined(separator: ", ")
        var after: Int64 = 0
        while true {
            // Pages in rowid order: insertion order, and no page is read twice.
            let page = try await pool.read { db in
                try Row.fetchAll(db, sql: "SELECT rowid AS copy_rowid, \(list) FROM \(table.rawValue) WHERE rowid > ? ORDER BY rowid LIMIT 500", arguments: [after])
            }
            guard let last = page.last else { return }
            after = last["copy_rowid"]
            try await batch(page.map { row in columns.map { Self.value(row[$0.name], kind: $0.kind) } })
        }
    }

    func importTables(
        replace: Bool, _ fill: @escaping @Sendable (_ write: @escaping @Sendable (StoreTable, [[StoreValue]]) async throws -> Void) async throws -> Void
    ) async throws {
        if replace {
            try await pool.write { db in
                for table in StoreSchema.order.reversed() { try db.execute(sql: "DELETE FROM \(table.rawValue)") }
            }
        }
        try await fill { table, rows in
            let columns = StoreSchema.columns[table] ?? []
            let sql = "INSERT INTO \(table.rawValue) (\(columns.map(\.name).joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
            try await self.pool.write { db in
                let statement = try db.cachedStatement(sql: sql)
                for row in rows { try statement.execute(arguments: StatementArguments(row.map(Self.databaseValue))) }
            }
        }
    }

    static func value(_ value: DatabaseValue, kind: ColumnKind) -> StoreValue {
        if value.isNull { return .null }
        switch kind {
        case .text: return String.fromDatabaseValue(value).map(StoreValue.text) ?? .null
        case .real: return Double.fromDatabaseValue(value).map(StoreValue.real) ?? .null
        case .integer: return Int.fromDatabaseValue(value).map(StoreValue.integer) ?? .null
        case .boolean: return Bool.fromDatabaseValue(value).map(StoreValue.boolean) ?? .null
        case .blob: return Data.fromDatabaseValue(value).map(StoreValue.blob) ?? .null
        }
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
