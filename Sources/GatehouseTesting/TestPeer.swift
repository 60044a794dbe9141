/// A real service a test talks to (a directory, an app's API), started for a test or a suite and
/// always stopped afterwards.
public protocol TestPeer: Sendable {
    static func start() async throws -> Self
    /// Stops the service and removes what it left on disk.
    func remove() async
}

extension TestPeer {
    /// Runs `body` with a peer of its own, removed afterwards whatever happens.
    public static func withOwn(_ body: (Self) async throws -> Void) async throws {
        let peer = try await start()
        do {
            try await body(peer)
        } catch {
            await peer.remove()
            throw error
        }
        await peer.remove()
    }
}
