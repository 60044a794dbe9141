import Foundation
import GatehouseCore

extension SecretSealer {
    /// A fixed key-encryption key for tests (never a real deployment's): the stored secrets of a test
    /// broker are sealed like a real one's.
    public static let forTests = SecretSealer(current: try! KeyEncryptionKey(bytes: Data(repeating: 0x42, count: 32)))
}
