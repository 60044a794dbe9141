import Foundation
import GatehousePluginKit

/// A parsed config document: the YAML tree after `${ENV}` substitution, before any type reads it.
/// Plugins receive their own `config:` subtree as a node and decode it with `ConfigNodeDecoder`.
public indirect enum ConfigNode: Sendable, Hashable, Decodable {
    /// Nothing (`~`, an empty value).
    case null
    /// A value, as its text.
    case scalar(String)
    /// A list.
    case sequence([ConfigNode])
    /// A mapping, in file order.
    case mapping([Entry])

    /// One key of a mapping, in file order.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public var key: String
        /// Its value.
        public var value: ConfigNode
        /// An entry.
        public init(key: String, value: ConfigNode) {
            self.key = key
            self.value = value
        }
    }

    /// Only `ConfigNodeDecoder` can produce a raw node; other decoders cannot.
    public init(from decoder: any Decoder) throws {
        guard let decoder = decoder as? ConfigNodeDecoder else {
            throw ConfigIssue(path: decoder.codingPath, "a raw config node can only be read from a config file")
        }
        self = decoder.node
        decoder.ledger.delegate(decoder.codingPath)
    }

    /// A mapping's value under `key`; nil for another kind of node or a missing key.
    public subscript(key: String) -> ConfigNode? {
        guard case .mapping(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    var kindName: String {
        switch self {
        case .null: "nothing"
        case .scalar: "a value"
        case .sequence: "a list"
        case .mapping: "a mapping"
        }
    }

}

extension ConfigNode {
    /// A JSON document as a config node, so that API input is checked by the same strict decoder
    /// (exact paths, unknown keys) as the config file.
    public init(json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .scalar(value ? "true" : "false")
        case .number(let value):
            self = .scalar(value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value))
        case .string(let value): self = .scalar(value)
        case .array(let values): self = .sequence(values.map(ConfigNode.init(json:)))
        case .object(let members): self = .mapping(members.keys.sorted().map { Entry(key: $0, value: ConfigNode(json: members[$0]!)) })
        }
    }

    /// The node as JSON, each scalar as the text it was written as: its type is for whoever decodes it
    /// (`off` is a string to an enum and false to a flag), so nothing is guessed here.
    public var uninterpretedJSON: JSONValue {
        switch self {
        case .null: .null
        case .scalar(let text): .string(text)
        case .sequence(let nodes): .array(nodes.map(\.uninterpretedJSON))
        case .mapping(let entries): .object(Dictionary(entries.map { ($0.key, $0.value.uninterpretedJSON) }) { _, last in last })
        }
    }
}
