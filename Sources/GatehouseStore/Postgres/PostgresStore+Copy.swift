import Foundation
import GatehouseCore
import PostgresNIO

extension PostgresStore: TableRowStore {
    func exportRows(_ table: StoreTable, batch: @escaping @Sendable ([[StoreValue]]) async throws -> Void) async throws {
        let columns = StoreSchema.columns[table] ?? []
        // Audit events keep their order; other tables have none that matters.
        let order = table == .auditEvents ? " ORDER BY seq" : ""
        try await client.withConnection { connection in
            // The rows stream in with back-pressure: a large table is never held in memory whole.
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT \(columns.map(\.name).joined(separator: ", ")) FROM \(table.rawValue)\(order)"), logger: self.logger
            )
            var page: [[StoreValue]] = []
            for try await row in rows {
                let cells = row.makeRandomAccess()
                page.append(try columns.enumerated().map { index, column in try Self.value(cells[index], kind: column.kind) })
                if page.count == 500 {
                    try await batch(page)
                    page.removeAll(keepingCapacity: true)
                }
            }
            if !page.isEmpty { try await batch(page) }
        }
    }

    /// One transaction for the whole copy: a copy that fails half-way leaves the target as it was.
    func importTables(
        replace: Bool, _ fill: @escaping @Sendable (_ write: @escaping @Sendable (StoreTable, [[StoreValue]]) async throws -> Void) async throws -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await connection.withTransaction(logger: self.logger) { connection in
                if replace {
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "TRUNCATE \(StoreSchema.order.map(\.rawValue).joined(separator: ", "))"), logger: self.logger
                    )
                }
                try await fill { table, rows in
                    let columns = StoreSchema.columns[table] ?? []
                    // Up to 500 rows a statement (a statement takes at most 65 535 parameters).
                    var bindings = PostgresBindings()
                    var tuples: [String] = []
                    for row in rows {
                        var placeholders: [String] = []
                        for value in row {
                            Self.bind(value, into: &bindings)
                            placeholders.append("$\(bindings.count)")
                        }
                        tuples.append("(" + placeholders.joined(separator: ", ") + ")")
                    }
                    guard !tuples.isEmpty else { return }
                    let sql = "INSERT INTO \(table.rawValue) (\(columns.map(\.name).joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))"
                    try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: self.logger)
                }
            }
        }
    }

    /// Where the database lives, to refuse copying a database onto itself.
    var copyIdentity: String { "postgres:\(LoopbackHost.contains(settings.host) ? "loopback" : settings.host.lowercased()):\(settings.port)/\(settings.database)" }

    static func value(_ cell: PostgresCell, kind: ColumnKind) throws -> StoreValue {
        switch kind {
        case .text: return try cell.decode(String?.self).map(StoreValue.text) ?? .null
        case .real: return try cell.decode(Double?.self).map(StoreValue.real) ?? .null
        case .integer: return try cell.decode(Int?.self).map(StoreValue.integer) ?? .null
        case .boolean: return try cell.decode(Bool?.self).map(StoreValue.boolean) ?? .null
        case .blob: return try cell.decode(Data?.self).map(StoreValue.blob) ?? .null
        }
    }

    static func bind(_ value: StoreValue, into bindings: inout PostgresBindings) {
        switch value {
        case .null: bindings.appendNull()
        case .integer(let number): bindings.append(number)
        case .real(let number): bindings.append(number)
        case .text(let text): bindings.append(text)
        case .blob(let data): bindings.append(ByteBuffer(data: data))
        case .boolean(let flag): bindings.append(flag)
        }
    }
}
