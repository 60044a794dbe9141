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
