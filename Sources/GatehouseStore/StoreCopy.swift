import Foundation
import GatehouseCore

/// One column value on its way between the two databases.
enum StoreValue: Sendable, Equatable {
    case null
    case integer(Int)
    case real(Double)
    case text(String)
    case blob(Data)
    case boolean(Bool)
}

/// What a column holds, the same on both databases (SQLite keeps booleans as integers).
enum ColumnKind: Sendable {
    case text, real, integer, boolean, blob
}

/// The schema's columns, table by table, in the order a copy writes the tables (a row's foreign key
/// always points at a table written before it).
enum StoreSchema {
    static let columns: [StoreTable: [(name: String, kind: ColumnKind)]] = [
        .apps: [
            ("id", .text), ("name", .text), ("secret_digest", .text), ("redirect_uris", .text), ("policy", .text), ("managed_by", .text),
            ("created_at", .real), ("updated_at", .real), ("version", .integer), ("disabled", .boolean),
        ],
        .accounts: [
            ("id", .text), ("username", .text), ("created_at", .real), ("is_test", .boolean), ("profile", .text), ("profile_pending", .boolean), ("disabled_at", .real),
            ("disabled_by", .text),
        ],
        .identityLinks: [("provider_id", .text), ("subject", .text), ("account_id", .text), ("claims", .text), ("created_at", .real), ("last_sign_in_at", .real)],
        .flows: [("id", .text), ("app_id", .text), ("payload", .text), ("expires_at", .real), ("version", .integer)],
        .refreshTokens: [
            ("digest", .text), ("family_id", .text), ("account_id", .text), ("app_id", .text), ("scopes", .text), ("issued_at", .real), ("expires_at", .real),
            ("used_at", .real), ("revoked_at", .real), ("auth_time", .real), ("amr", .text), ("idp", .text), ("sign_in_key", .text), ("dpop_jkt", .text),
            ("installation", .text), ("session_id", .text),
        ],
        .signingKeys: [("kid", .text), ("algorithm", .text), ("private_key_pem", .text), ("created_at", .real), ("retired_at", .real), ("activates_at", .real)],
        .auditEvents: [
            ("id", .text), ("time", .real), ("type", .text), ("app_id", .text), ("account_id", .text), ("provider_id", .text), ("outcome", .text), ("details", .text),
        ],
        .pluginData: [("namespace", .text), ("key", .text), ("value", .blob), ("version", .integer), ("expires_at", .real)],
        .authorizationCodes: [
            ("digest", .text), ("app_id", .text), ("redirect_uri", .text), ("code_challenge", .text), ("nonce", .text), ("scopes", .text), ("account_id", .text),
            ("auth_time", .real), ("amr", .text), ("idp", .text), ("expires_at", .real), ("used_at", .real), ("issued_family_id", .text),
            ("issued_access_token_id", .text), ("issued_access_token_expires_at", .real), ("session_id", .text),
        ],
        .revocations: [("kind", .text), ("value", .text), ("revoked_at", .real), ("expires_at", .real)],
        .attemptCounters: [("key", .text), ("failures", .integer), ("window_start", .real), ("locked_until", .real), ("lockouts", .integer), ("updated_at", .real)],
        .provisionalIdentities: [
            ("id", .text), ("app_id", .text), ("email", .text), ("grants", .text), ("groups", .text), ("created_at", .real), ("created_by", .text),
            ("account_id", .text), ("attached_at", .real),
        ],
        .devices: [
            ("id", .text), ("account_id", .text), ("vendor_id", .text), ("platform", .text), ("model", .text), ("alias", .text), ("created_at", .real),
            ("last_used_at", .real),
        ],
        .installations: [
            ("id", .text), ("device_id", .text), ("account_id", .text), ("app_id", .text), ("installation_id", .text), ("os_version", .text),
            ("app_version", .text), ("build_type", .text), ("created_at", .real), ("last_used_at", .real), ("push_token", .text), ("biometric", .boolean),
        ],
        .signInKeys: [
            ("id", .text), ("account_id", .text), ("device_id", .text), ("installation_ref", .text), ("provider_id", .text), ("public_key", .text),
            ("thumbprint", .text), ("algorithm", .text), ("counter", .integer), ("attestation", .text), ("created_at", .real), ("last_used_at", .real),
        ],
        .browserSessions: [
            ("id", .text), ("cookie_digest", .text), ("account_id", .text), ("providers", .text), ("factors", .text), ("amr", .text), ("subject", .text),
            ("username", .text), ("auth_time", .real), ("created_at", .real), ("last_seen_at", .real), ("expires_at", .real), ("ended_at", .real),
            ("client_ip", .text), ("user_agent", .text),
        ],
        .browserSessionApps: [("session_id", .text), ("app_id", .text)],
        .scimClients: [("id", .text), ("name", .text), ("token_digest", .text), ("created_at", .real), ("created_by", .text)],
        .scimResources: [
            ("id", .text), ("client_id", .text), ("kind", .text), ("name", .text), ("name_key", .text), ("external_id", .text), ("account_id", .text),
            ("active", .boolean), ("attributes", .text), ("version", .integer), ("created_at", .real), ("updated_at", .real),
        ],
        .scimMembers: [("group_id", .text), ("user_id", .text), ("position", .integer)],
        .deviceAuthorizations: [
            ("device_code_digest", .text), ("user_code_digest", .text), ("app_id", .text), ("payload", .text), ("expires_at", .real), ("version", .integer),
        ],
    ]

    /// Every table, parents before children.
    static let order: [StoreTable] = [
        .apps, .accounts, .identityLinks, .flows, .refreshTokens, .signingKeys, .auditEvents, .pluginData, .authorizationCodes, .revocations,
        .attemptCounters, .provisionalIdentities, .devices, .installations, .signInKeys, .browserSessions, .browserSessionApps,
        .deviceAuthorizations, .scimClients, .scimResources, .scimMembers,
    ]
}

/// A store whose tables can be read and written row by row, for `gatehouse storage copy`.
protocol TableRowStore: OperatedStore {
    /// Where the database lives (a resolved file path, a host, port and database name).
    var copyIdentity: String { get }
    /// Hands the table's rows to `batch` a few hundred at a time, in insertion order (audit events
    /// keep their order).
    func exportRows(_ table: StoreTable, batch: @escaping @Sendable ([[StoreValue]]) async throws -> Void) async throws
    /// Writes every table's rows, all or nothing where the database allows (PostgreSQL: one
    /// transaction); `replace` empties the tables first.
    func importTables(replace: Bool, _ fill: @escaping @Sendable (_ write: @escaping @Sendable (StoreTable, [[StoreValue]]) async throws -> Void) async throws -> Void)
        async throws
}

/// Copies a whole database into another (SQLite into PostgreSQL, or back), then checks the row
/// counts table by table.
public enum StoreCopy {
    /// One table's row counts after a copy.
    public struct TableCount: Sendable {
        public var table: StoreTable
        public var source: Int
        public var target: Int
        public var matches: Bool { source == target }
    }

    /// Why a copy did not start.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Copies every row of `source` into `target`. Refuses a target that holds rows unless `replace`
    /// (then its rows are deleted first), and two databases at different schema versions.
    public static func copy(from source: any OperatedStore, to target: any OperatedStore, replace: Bool) async throws -> [TableCount] {
        guard let source = source as? any TableRowStore, let target = target as? any TableRowStore else {
            throw Refusal(description: "only the built-in SQLite and PostgreSQL stores can be copied")
        }
        guard source.copyIdentity != target.copyIdentity else {
            throw Refusal(description: "--from and --to name the same database (\(target.summary)); a copy onto itself would lose everything with --replace")
        }
        let sourceSchema = try await source.appliedMigrations()
        let targetSchema = try await target.appliedMigrations()
        guard sourceSchema == targetSchema else {
            throw Refusal(
                description: "the two databases have different schemas (source: \(sourceSchema.last ?? "none"), target: \(targetSchema.last ?? "none")); "
                    + "run `gatehouse migrate` on the source first"
            )
        }
        let before = try await target.rowCounts()
        let filled = before.filter { $0.value > 0 }.map { "\($0.key.rawValue) (\($0.value))" }.sorted()
        if !filled.isEmpty, !replace {
            throw Refusal(
                description:
                    "the target \(target.summary) is not empty: \(filled.joined(separator: ", ")). Copy into an empty database, or pass --replace to delete what it holds first"
            )
        }
        do {
            try await target.importTables(replace: replace) { write in
                for table in StoreSchema.order {
                    try await source.exportRows(table) { rows in try await write(table, rows) }
                }
            }
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            // postgres-nio's errors describe themselves vaguely on purpose; say what the server said.
            throw Refusal(
                description:
                    "the copy failed and was rolled back where the target allows (\(PostgresStore.explain(error))); is a broker still using one of the databases?")
        }
        var counts: [TableCount] = []
        for table in StoreSchema.order {
            counts.append(TableCount(table: table, source: try await source.count(table: table), target: try await target.count(table: table)))
        }
        return counts
    }
}
