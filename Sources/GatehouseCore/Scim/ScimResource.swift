import Foundation

/// What a client sends as a User or Group, made into the attributes Gatehouse keeps, and a stored
/// resource made into the JSON a client reads (RFC 7643 sections 4.1, 4.2 and 3.1).
enum ScimResource {
    /// The User attributes Gatehouse keeps (RFC 7643 section 4.1), by lower-cased name; `groups` is
    /// computed and `password` never kept. Other attributes are ignored, as read-only ones are.
    static let userAttributes = [
        "userName", "name", "displayName", "nickName", "profileUrl", "title", "userType", "preferredLanguage", "locale", "timezone", "active", "emails",
        "phoneNumbers", "ims", "photos", "addresses", "entitlements", "roles", "x509Certificates", "externalId",
    ]
    static let groupAttributes = ["displayName", "members", "externalId"]
    /// What no write may change: the broker's.
    static let readOnly: Set<String> = ["id", "meta", "schemas", "groups"]
    /// The longest `userName` or `displayName`.
    static let maxNameLength = 256

    /// The kept attributes of a User or Group body: known attributes under their canonical names, the
    /// enterprise extension kept whole; `id`, `meta`, `groups`, `password` and unknown ones dropped.
    static func attributes(of body: [String: JSONValue], kind: ScimKind) -> [String: JSONValue] {
        let known = kind == .user ? userAttributes : groupAttributes
        var kept: [String: JSONValue] = [:]
        for (key, value) in body {
            if let name = known.first(where: { $0.lowercased() == key.lowercased() }) {
                if value != .null { kept[name] = value }
            } else if kind == .user, key.lowercased() == ScimPath.enterpriseUser.lowercased(), case .object = value {
                kept[ScimPath.enterpriseUser] = value
            }
        }
        return kept
    }

    /// Checks a User's attributes and answers them normalised (`active` a boolean, absent meaning
    /// true), with its `userName` and `externalId`.
    static func checkedUser(_ attributes: [String: JSONValue]) throws(ScimError) -> (attributes: [String: JSONValue], userName: String, externalID: String?, active: Bool)
    {
        var attributes = attributes
        guard case .string(let userName) = attributes["userName"], !userName.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidValue("A User needs a userName.")
        }
        guard userName.count <= maxNameLength, !userName.contains("\0") else { throw .invalidValue("The userName is longer than \(maxNameLength) characters.") }
        // Absent (never sent, or removed) is active: only `false` deprovisions.
        let active: Bool
        switch attributes["active"] {
        case nil: active = true
        case .bool(let value):
            active = value
        // Entra ID sends "True" and "False" as strings in PATCH values.
        case .string(let text) where ["true", "false"].contains(text.lowercased()):
            active = text.lowercased() == "true"
            attributes["active"] = .bool(active)
        default: throw .invalidValue("active must be true or false.")
        }
        let externalID = try optionalString(attributes["externalId"], name: "externalId")
        for name in ["emails", "phoneNumbers", "ims", "photos", "addresses", "entitlements", "roles", "x509Certificates"] {
            if let value = attributes[name], !isListOfObjects(value) { throw .invalidValue("\(name) must be a list of objects.") }
        }
        if let name = attributes["name"], case .object = name {} else if attributes["name"] != nil { throw .invalidValue("name must be an object.") }
        return (attributes, userName, externalID, active)
    }

    /// Checks a Group's attributes: its `displayName`, `externalId` and member ids.
    static func checkedGroup(_ attributes: [String: JSONValue]) throws(ScimError) -> (
        attributes: [String: JSONValue], displayName: String, externalID: String?, members: [String]
    ) {
        var attributes = attributes
        guard case .string(let displayName) = attributes["displayName"], !displayName.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .invalidValue("A Group needs a displayName.")
        }
        guard displayName.count <= maxNameLength else { throw .invalidValue("The displayName is longer than \(maxNameLength) characters.") }
        let externalID = try optionalString(attributes["externalId"], name: "externalId")
        var members: [String] = []
        var seen: Set<String> = []
        if let value = attributes["members"] {
            guard case .array(let items) = value else { throw .invalidValue("members must be a list.") }
            for item in items {
                guard case .object(let member) = item, case .string(let id) = ScimPath.value(member, "value"), !id.isEmpty else {
                    throw .invalidValue("Each member needs a value: the id of a User.")
                }
                if case .string(let type) = ScimPath.value(member, "type"), type.lowercased() != "user" {
                    throw .invalidValue("Only Users can be members; groups do not nest here.")
                }
                if seen.insert(id).inserted { members.append(id) }
            }
        }
        // Members are kept as ids; their `display` is computed when read.
        attributes["members"] = nil
        return (attributes, displayName, externalID, members)
    }

    static func optionalString(_ value: JSONValue?, name: String) throws(ScimError) -> String? {
        switch value {
        case nil, .null: return nil
        case .string(let text): return text.isEmpty ? nil : text
        default: throw .invalidValue("\(name) must be a string.")
        }
    }

    static func isListOfObjects(_ value: JSONValue) -> Bool {
        guard case .array(let items) = value else { return false }
        return items.allSatisfy { if case .object = $0 { true } else { false } }
    }

    // MARK: - Reading

    static let timestamp: Date.ISO8601FormatStyle = .iso8601

    /// The ETag of a resource version.
    static func etag(_ version: Int) -> String { "W/\"\(version)\"" }

    /// The JSON a client reads. `groups` (for a user) are the groups holding it. A group's members are
    /// their ids, references and type, as a client writes them (no computed `display`, which clients
    /// comparing what they wrote with what they read take for a change).
    static func json(_ record: ScimResourceRecord, base: String, groups: [ScimResourceRecord] = []) -> [String: JSONValue] {
        var object = record.attributes
        let path = record.kind == .user ? "Users" : "Groups"
        var schemas: [JSONValue] = [.string(record.kind == .user ? ScimPath.coreUser : ScimPath.coreGroup)]
        if object[ScimPath.enterpriseUser] != nil { schemas.append(.string(ScimPath.enterpriseUser)) }
        object["schemas"] = .array(schemas)
        object["id"] = .string(record.id)
        if let externalID = record.externalID { object["externalId"] = .string(externalID) }
        switch record.kind {
        case .user:
            // `active` as it was given; absent (active) stays absent.
            if object["active"] != nil || !record.active { object["active"] = .bool(record.active) }
            object["groups"] = .array(
                groups.map { group in
                    .object([
                        "value": .string(group.id), "display": .string(group.name), "$ref": .string("\(base)/Groups/\(group.id)"), "type": "direct",
                    ])
                })
        case .group:
            object["members"] = .array(
                record.members.map { id in .object(["value": .string(id), "$ref": .string("\(base)/Users/\(id)"), "type": "User"]) })
        }
        object["meta"] = .object([
            "resourceType": .string(record.kind.rawValue), "created": .string(record.createdAt.formatted(timestamp)),
            "lastModified": .string(record.updatedAt.formatted(timestamp)), "location": .string("\(base)/\(path)/\(record.id)"),
            "version": .string(etag(record.version)),
        ])
        return object
    }

    /// Only the attributes asked for (`attributes`), or all but those excluded (`excludedAttributes`);
    /// `id` and `schemas` always stay (RFC 7644 section 3.4.2.5). Top-level names and sub-attributes.
    static func projected(_ object: [String: JSONValue], attributes: [String], excluded: [String]) -> [String: JSONValue] {
        let always: Set<String> = ["id", "schemas"]
        func paths(_ list: [String]) -> [(String, String?)] {
            list.compactMap { try? ScimPath.parse($0) }.map { ($0.schema ?? $0.attribute, $0.schema == nil ? $0.subAttribute : $0.attribute) }
        }
        if !attributes.isEmpty {
            let wanted = paths(attributes)
            var result: [String: JSONValue] = [:]
            for (key, value) in object {
                if always.contains(key) {
                    result[key] = value
                    continue
                }
                let matches = wanted.filter { $0.0.lowercased() == key.lowercased() }
                guard !matches.isEmpty else { continue }
                let subs = matches.compactMap(\.1)
                if subs.count < matches.count { result[key] = value } else { result[key] = keepingSubs(value, subs) }
            }
            return result
        }
        var result = object
        for (attribute, sub) in paths(excluded) {
            let key = ScimPath.existingKey(result, attribute)
            guard !always.contains(key) else { continue }
            if let sub, let value = result[key] { result[key] = removingSub(value, sub) } else { result[key] = nil }
        }
        return result
    }

    static func keepingSubs(_ value: JSONValue, _ subs: [String]) -> JSONValue {
        switch value {
        case .object(let fields): .object(fields.filter { field in subs.contains { $0.lowercased() == field.key.lowercased() } })
        case .array(let items): .array(items.map { keepingSubs($0, subs) })
        default: value
        }
    }

    static func removingSub(_ value: JSONValue, _ sub: String) -> JSONValue {
        switch value {
        case .object(let fields): .object(fields.filter { $0.key.lowercased() != sub.lowercased() })
        case .array(let items): .array(items.map { removingSub($0, sub) })
        default: value
        }
    }
}
