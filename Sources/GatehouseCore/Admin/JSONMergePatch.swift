/// JSON Merge Patch (RFC 7396): objects merge member by member, `null` removes a member, anything
/// else replaces.
public enum JSONMergePatch {
    public static func apply(_ patch: JSONValue, to target: JSONValue) -> JSONValue {
        guard case .object(let changes) = patch else { return patch }
        var result: [String: JSONValue] = if case .object(let members) = target { members } else { [:] }
        for (key, value) in changes {
            if value == .null {
                result[key] = nil
            } else {
                result[key] = apply(value, to: result[key] ?? .null)
            }
        }
        return .object(result)
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
    var uninterpretedJSON: JSONValue {
        switch self {
        case .null: .null
        case .scalar(let text): .string(text)
        case .sequence(let nodes): .array(nodes.map(\.uninterpretedJSON))
        case .mapping(let entries): .object(Dictionary(entries.map { ($0.key, $0.value.uninterpretedJSON) }) { _, last in last })
        }
    }
}
