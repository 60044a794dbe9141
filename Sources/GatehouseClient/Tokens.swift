import Foundation

/// The tokens of a sign-in, as the SDK keeps them: what the token endpoint answered, with the moment
/// the access token expires (`expiresAt`, from `expires_in` when it arrived) instead of a duration.
public struct Tokens: Sendable, Codable, Equatable {
    public var accessToken: String
    /// `DPoP` when the tokens are bound to this installation's proof key, else `Bearer`.
    public var tokenType: String
    public var expiresAt: Date
    /// None for a stateless sign-in.
    public var refreshToken: String?
    public var idToken: String?
    public var scope: String?
    /// The account (none for a stateless sign-in).
    public var accountID: String?
    public var username: String?

    public var isBound: Bool { tokenType.caseInsensitiveCompare("DPoP") == .orderedSame }

    /// From a token or flow answer's `tokens` object.
    init(_ json: JSON, receivedAt now: Date, account: JSON? = nil, previous: Tokens? = nil) throws {
        guard let accessToken = json["access_token"]?.string, let tokenType = json["token_type"]?.string else {
            throw GatehouseError.transport("the answer has no access_token or token_type")
        }
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = now.addingTimeInterval(json["expires_in"]?.number ?? 0)
        // A refresh answer without a new refresh token keeps the one it was made with (RFC 6749 section 6).
        self.refreshToken = json["refresh_token"]?.string ?? previous?.refreshToken
        self.idToken = json["id_token"]?.string ?? previous?.idToken
        self.scope = json["scope"]?.string ?? previous?.scope
        self.accountID = account?["id"]?.string ?? previous?.accountID
        self.username = account?["username"]?.string ?? previous?.username
    }

    /// The ID token's claims, read without verifying its signature: it came straight from the broker
    /// over the connection the SDK opened (OpenID Connect Core section 3.1.3.7 allows TLS to stand in
    /// for the signature there). For display, never to authorise anything.
    public var idTokenClaims: JSON? {
        guard let idToken, case let parts = idToken.split(separator: "."), parts.count == 3, let payload = Base64URL.decode(String(parts[1])) else { return nil }
        return try? JSON.decode(payload)
    }
}

/// Where the tokens are kept between launches. On Apple platforms `KeychainTokenStore`; in memory for
/// tests and short-lived tools (`InMemoryTokenStore`).
public protocol TokenStore: Sendable {
    func load() async throws -> Tokens?
    func save(_ tokens: Tokens) async throws
    func clear() async throws
}

/// Tokens kept in memory only.
public actor InMemoryTokenStore: TokenStore {
    private var tokens: Tokens?
    public init() {}
    public func load() async throws -> Tokens? { tokens }
    public func save(_ tokens: Tokens) async throws { self.tokens = tokens }
    public func clear() async throws { tokens = nil }
}

#if canImport(Security)
import Security

/// Tokens in the Keychain, readable after the device's first unlock and never in backups or on another
/// device (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`).
public actor KeychainTokenStore: TokenStore {
    private let service: String
    private let account: String

    public init(service: String, account: String = "tokens") {
        self.service = service
        self.account = account
    }

    public func load() async throws -> Tokens? {
        var query = baseQuery
        query[kSecReturnData as String] = true
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw GatehouseError.transport("the Keychain answered \(status)") }
        return try JSONDecoder().decode(Tokens.self, from: data)
    }

    public func save(_ tokens: Tokens) async throws {
        try KeychainItem.write(try JSONEncoder().encode(tokens), query: baseQuery)
    }

    public func clear() async throws {
        let status = SecItemDelete(baseQuery as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw GatehouseError.transport("the Keychain answered \(status)") }
    }

    private var baseQuery: [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
            kSecUseDataProtectionKeychain as String: true,
        ]
    }
}
#endif

/// Tokens in a file readable by its owner only: for command-line tools and Linux services, where
/// there is no Keychain.
public actor FileTokenStore: TokenStore {
    private let file: URL

    public init(file: URL) {
        self.file = file
    }

    public func load() async throws -> Tokens? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(Tokens.self, from: try Data(contentsOf: file))
    }

    public func save(_ tokens: Tokens) async throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        try OwnerOnlyFile.write(try encoder.encode(tokens), to: file)
    }

    public func clear() async throws {
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
