import Foundation
import GatehousePluginKit

/// Decodes a `ConfigNode` into any `Decodable` type, strictly: every error carries the exact path,
/// and `unknownKeys()` afterwards lists each mapping key that the types did not read (a typo such as
/// `polcy:` is an error, not silently ignored).
public final class ConfigNodeDecoder: Decoder {
    let node: ConfigNode
    let ledger: Ledger
    /// Where in the document this decoder reads.
    public let codingPath: [any CodingKey]
    /// None.
    public var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes `type` from `node`, whose position in the whole document is `path`; throws every
    /// problem found, unknown keys included.
    public static func decode<T: Decodable>(_ type: T.Type, from node: ConfigNode, at path: [any CodingKey] = []) throws(ConfigIssues) -> T {
        let decoder = ConfigNodeDecoder(node: node, path: path, ledger: Ledger())
        let value: T
        // After a failure, keys the types know but never reached (decoding stopped at the mistake)
        // are not typos: only keys no type recognises are reported as unknown then.
        do {
            value = try T(from: decoder)
        } catch let issue as ConfigIssue {
            throw ConfigIssues([issue] + decoder.unknownKeys(afterFailure: true))
        } catch let issues as ConfigIssues {
            throw ConfigIssues(issues.issues + decoder.unknownKeys(afterFailure: true))
        } catch {
            throw ConfigIssues([ConfigIssue(path: path, "\(error)")] + decoder.unknownKeys(afterFailure: true))
        }
        let unknown = decoder.unknownKeys()
        if !unknown.isEmpty { throw ConfigIssues(unknown) }
        return value
    }

    init(node: ConfigNode, path: [any CodingKey], ledger: Ledger) {
        self.node = node
        self.codingPath = path
        self.ledger = ledger
    }

    /// Mapping keys no type asked for, below this decoder's node; `afterFailure`: leaving out keys
    /// the mapping's type recognises (its coding keys) but did not reach.
    func unknownKeys(afterFailure: Bool = false) -> [ConfigIssue] {
        var issues: [ConfigIssue] = []
        func walk(_ node: ConfigNode, _ path: [any CodingKey]) {
            let rendered = ConfigIssue.render(path)
            if ledger.delegated.contains(rendered) { return }
            switch node {
            case .mapping(let entries):
                for entry in entries {
                    let childPath = path + [ConfigIssue.Key(entry.key)]
                    let child = ConfigIssue.render(childPath)
                    if ledger.keyed.contains(rendered), !ledger.read.contains(child) {
                        if !(afterFailure && ledger.recognized.contains(child)) { issues.append(ConfigIssue(path: childPath, "unknown key")) }
                    } else {
                        walk(entry.value, childPath)
                    }
                }
            case .sequence(let elements):
                for (index, element) in elements.enumerated() { walk(element, path + [ConfigIssue.Key(index: index)]) }
            case .scalar, .null:
                break
            }
        }
        walk(node, codingPath)
        return issues
    }

    /// Which paths were read as mappings, which keys were asked for, and which subtrees belong to
    /// someone else (a plugin's `config:`).
    final class Ledger: @unchecked Sendable {
        var keyed: Set<String> = []
        var read: Set<String> = []
        /// Keys present in a mapping that its type's coding keys name (read or not).
        var recognized: Set<String> = []
        var delegated: Set<String> = []
        func delegate(_ path: [any CodingKey]) { delegated.insert(ConfigIssue.render(path)) }
    }

    func mismatch(_ expected: String) -> ConfigIssue {
        ConfigIssue(path: codingPath, "expected \(expected), found \(node.kindName)")
    }

    /// A mapping's keys; the keys read are recorded, so that the others are reported as unknown.
    public func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch node {
        case .mapping(let entries):
            ledger.keyed.insert(ConfigIssue.render(codingPath))
            for entry in entries where Key(stringValue: entry.key) != nil {
                ledger.recognized.insert(ConfigIssue.render(codingPath + [ConfigIssue.Key(entry.key)]))
            }
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: entries))
        case .null:
            // An empty section (`policy:` with nothing under it) reads as an empty mapping.
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: []))
        default:
            throw mismatch("a mapping")
        }
    }

    /// A list's elements.
    public func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch node {
        case .sequence(let elements): return UnkeyedContainer(decoder: self, elements: elements)
        case .null: return UnkeyedContainer(decoder: self, elements: [])
        default: throw mismatch("a list")
        }
    }

    /// A scalar.
    public func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

    func child(_ node: ConfigNode, _ key: any CodingKey) -> ConfigNodeDecoder {
        ConfigNodeDecoder(node: node, path: codingPath + [key], ledger: ledger)
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == ConfigNode.self {
            ledger.delegate(codingPath)
            return node as! T
        }
        return try T(from: self)
    }

    func scalar(_ expected: String) throws -> String {
        guard case .scalar(let text) = node else { throw mismatch(expected) }
        return text
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: ConfigNodeDecoder
    let entries: [ConfigNode.Entry]
    var codingPath: [any CodingKey] { decoder.codingPath }

    var allKeys: [Key] {
        entries.compactMap { entry in
            decoder.ledger.read.insert(ConfigIssue.render(codingPath + [ConfigIssue.Key(entry.key)]))
            return Key(stringValue: entry.key)
        }
    }

    private func lookup(_ key: Key) -> ConfigNode? {
        decoder.ledger.read.insert(ConfigIssue.render(codingPath + [key]))
        return entries.first { $0.key == key.stringValue }?.value
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let node = lookup(key) else { return true }
        return node == .null
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let node = lookup(key) else {
            throw ConfigIssue(path: codingPath + [key], "required key is missing")
        }
        return try decoder.child(node, key).decodeValue(T.self)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder.child(lookup(key) ?? .null, key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder.child(lookup(key) ?? .null, key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { decoder }

    func superDecoder(forKey key: Key) throws -> any Decoder { decoder.child(lookup(key) ?? .null, key) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: ConfigNodeDecoder
    let elements: [ConfigNode]
    var currentIndex = 0
    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    init(decoder: ConfigNodeDecoder, elements: [ConfigNode]) {
        self.decoder = decoder
        self.elements = elements
    }

    private mutating func next() throws -> ConfigNodeDecoder {
        guard !isAtEnd else { throw ConfigIssue(path: codingPath, "the list is too short") }
        defer { currentIndex += 1 }
        return decoder.child(elements[currentIndex], ConfigIssue.Key(index: currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(T.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }

    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ConfigNodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.node == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        switch try decoder.scalar("true or false") {
        case "true", "True", "TRUE", "on", "yes": return true
        case "false", "False", "FALSE", "off", "no": return false
        case let other: throw ConfigIssue(path: codingPath, "expected true or false, found '\(other)'")
        }
    }

    func decode(_ type: String.Type) throws -> String { try decoder.scalar("a string") }

    func decode(_ type: Double.Type) throws -> Double {
        let text = try decoder.scalar("a number")
        guard let value = Double(text) else { throw ConfigIssue(path: codingPath, "expected a number, found '\(text)'") }
        return value
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let text = try decoder.scalar("a whole number")
        guard let value = T(text) else { throw ConfigIssue(path: codingPath, "expected a whole number, found '\(text)'") }
        return value
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(T.self) }
}
