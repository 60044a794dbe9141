import GRDB

extension Database {
    /// Runs one statement of fixed text through the connection's statement cache. Compiling a
    /// statement costs more than running these short ones (GRDB's authorizer visits every column at
    /// each compile), so the store's writes compile each text once per connection. Only for SQL
    /// whose text takes no values by interpolation: every distinct text stays in the cache.
    func executeCached(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}
