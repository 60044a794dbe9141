/// One token renewal at a time: a refresh token is single-use (the broker rotates it, and a second
/// use revokes its whole family), so callers that need a renewal while one is under way wait for it
/// and share its result instead of sending their own.
actor TokenRenewal {
    private var running: Task<Tokens, any Error>?

    func run(_ renew: @escaping @Sendable () async throws -> Tokens) async throws -> Tokens {
        if let running { return try await running.value }
        let task = Task { try await renew() }
        running = task
        defer { running = nil }
        return try await task.value
    }

    /// Returns once no renewal is under way (whatever its outcome).
    func waitUntilIdle() async {
        if let running { _ = try? await running.value }
    }
}
