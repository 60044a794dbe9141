import GatehouseCore
import Testing

/// A real service one test suite shares: started once before the suite's first test, stopped after
/// its last (`@Suite(..., .shared(Slapd.self))`), and reached from the tests as `Slapd.shared`.
public protocol SharedTestPeer: TestPeer {
    /// Where the suite's peer is kept while the suite runs: declare it as
    /// `static let suitePeer = TaskLocal<Self?>(wrappedValue: nil)`.
    static var suitePeer: TaskLocal<Self?> { get }
}

extension SharedTestPeer {
    /// The peer of the running suite (which must be marked `.shared(Self.self)`).
    public static var shared: Self {
        guard let peer = suitePeer.get() else { preconditionFailure("the suite is not marked .shared(\(Self.self).self)") }
        return peer
    }
}

/// Starts the suite's peer and stops it afterwards, whatever happens.
public struct SharedPeerTrait<Peer: SharedTestPeer>: SuiteTrait, TestScoping {
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await Peer.withOwn { peer in
            try await Peer.suitePeer.withValue(peer) { try await function() }
        }
    }
}

extension Trait {
    /// One `Peer` for the whole suite.
    public static func shared<Peer: SharedTestPeer>(_ peer: Peer.Type) -> Self where Self == SharedPeerTrait<Peer> {
        SharedPeerTrait()
    }
}

/// The error `body` throws, as an `E`; records an issue (and answers nil) when it throws nothing or
/// something else.
public func thrownError<E: Error>(
    _ type: E.Type = BrokerError.self, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> E? {
    do {
        try await body()
        Issue.record("nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
