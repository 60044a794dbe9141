import Crypto
import Foundation
import Synchronization

/// The refresh token that replaces a presented one, made the same way on every node: an HMAC of the
/// presented token under a key kept (sealed) in the store. So a client that presents a rotated token
/// again within its app's `refreshReuseGrace` (its answer was lost) is answered with the same
/// successor, found by its digest, without the broker ever storing a token in a form it could hand
/// out again. Keyed, so that nobody who holds an old token can work out its successor.
public final class RefreshTokenSuccessors: Sendable {
    private let storage: PluginStorage
    private let key = Mutex<SymmetricKey?>(nil)

    public init(storage: PluginStorage) {
        self.storage = storage
    }

    /// The successor of `token`: 32 bytes, base64url, as every refresh token.
    public func successor(of token: String) async throws -> String {
        let key = try await loadKey()
        return Base64URL.encode(Data(HMAC<SHA256>.authenticationCode(for: Data(("gatehouse-refresh-successor\u{0}" + token).utf8), using: key)))
    }

    /// The key, made by the first node that needs it; every other node reads that one.
    private func loadKey() async throws -> SymmetricKey {
        if let known = key.withLock({ $0 }) { return known }
        let loaded = try await storage.instanceKey("successor-key")
        key.withLock { $0 = loaded }
        return loaded
    }
}
