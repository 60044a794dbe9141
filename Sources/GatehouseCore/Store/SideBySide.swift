/// Runs two independent store writes of one request at the same time, so that they share one group
/// commit on SQLite or overlap their round trips on PostgreSQL instead of waiting for each other.
/// Both are always awaited, whatever the other's fate; the first error (the main write's first) is
/// thrown.
enum SideBySide {
    static func run<T: Sendable>(
        _ main: @Sendable () async throws -> T, beside side: @escaping @Sendable () async throws -> Void
    ) async throws -> T {
        async let besides: Void = side()
        let result: T
        do {
            result = try await main()
        } catch {
            try? await besides
            throw error
        }
        try await besides
        return result
    }
}
