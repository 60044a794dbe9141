import Foundation

/// `keys:` — the key-encryption key (KEK) that encrypts the secrets the broker stores (signing keys,
/// plugins' secrets). Given as base64 text (`encryptionKey: ${GATEHOUSE_KEK}`) or as a file readable
/// by its owner only (`encryptionKeyFile`). Without either, development creates a key file beside the
/// database on first start; production refuses to start. Older keys stay readable (not used for
/// writing) while `gatehouse keys rewrap` moves every value to the current one.
public struct KeysConfig: Sendable, Decodable {
    public var encryptionKey: String?
    public var encryptionKeyFile: String?
    public var previousEncryptionKeys: [String]
    public var previousEncryptionKeyFiles: [String]

    public init(encryptionKey: String? = nil, encryptionKeyFile: String? = nil, previousEncryptionKeys: [String] = [], previousEncryptionKeyFiles: [String] = []) {
        self.encryptionKey = encryptionKey
        self.encryptionKeyFile = encryptionKeyFile
        self.previousEncryptionKeys = previousEncryptionKeys
        self.previousEncryptionKeyFiles = previousEncryptionKeyFiles
    }

    enum CodingKeys: String, CodingKey { case encryptionKey, encryptionKeyFile, previousEncryptionKeys, previousEncryptionKeyFiles }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        encryptionKey = try container.decodeIfPresent(String.self, forKey: .encryptionKey)
        encryptionKeyFile = try container.decodeIfPresent(String.self, forKey: .encryptionKeyFile)
        previousEncryptionKeys = try container.decodeIfPresent([String].self, forKey: .previousEncryptionKeys) ?? []
        previousEncryptionKeyFiles = try container.decodeIfPresent([String].self, forKey: .previousEncryptionKeyFiles) ?? []
        let path = decoder.codingPath
        if encryptionKey != nil, encryptionKeyFile != nil {
            throw ConfigIssue(path: path + [CodingKeys.encryptionKeyFile], "give encryptionKey or encryptionKeyFile, not both")
        }
        if let encryptionKey {
            do { _ = try KeyEncryptionKey(text: encryptionKey) } catch { throw ConfigIssue(path: path + [CodingKeys.encryptionKey], error.description) }
        }
        for (index, text) in previousEncryptionKeys.enumerated() {
            do { _ = try KeyEncryptionKey(text: text) } catch {
                throw ConfigIssue(path: path + [CodingKeys.previousEncryptionKeys, ConfigIssue.Key(index: index)], error.description)
            }
        }
    }

    /// Whether the config names a key (text or file).
    public var isConfigured: Bool { encryptionKey != nil || encryptionKeyFile != nil }
}
