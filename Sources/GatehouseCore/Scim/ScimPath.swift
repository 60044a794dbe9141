import Foundation

/// An attribute path of a SCIM filter or PATCH (RFC 7644 section 3.10): `[schema URN:]attribute[.sub]`.
/// The core schemas' URNs name the top level; an extension's URN (the enterprise User's) names the
/// object kept under that URN.
public struct ScimPath: Sendable, Equatable {
    /// The extension whose object holds the attribute; nil for the core schema's top level.
    public var schema: String?
    public var attribute: String
    public var subAttribute: String?

    public static let coreUser = "urn:ietf:params:scim:schemas:core:2.0:User"
    public static let coreGroup = "urn:ietf:params:scim:schemas:core:2.0:Group"
    public static let enterpriseUser = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
    static let coreSchemas = [coreUser.lowercased(), coreGroup.lowercased()]
    static let extensions = [enterpriseUser]

    public init(schema: String? = nil, attribute: String, subAttribute: String? = nil) {
        self.schema = schema
        self.attribute = attribute
        self.subAttribute = subAttribute
    }

    /// Parses a path; throws `invalidFilter` (in a filter) or `invalidPath`.
    public static func parse(_ text: String, forFilter: Bool = false) throws(ScimError) -> ScimPath {
        func refuse() -> ScimError {
            let detail = "'\(text)' is not an attribute path."
            return forFilter ? .invalidFilter(detail) : .invalidPath(detail)
        }
        var rest = Substring(text)
        var schema: String?
        if text.lowercased().hasPrefix("urn:") {
            if let known = extensions.first(where: { $0.lowercased() == text.lowercased() }) {
                // The extension's whole object.
                return ScimPath(attribute: known)
            }
            guard let colon = text.lastIndex(of: ":") else { throw refuse() }
            let urn = String(text[..<colon])
            rest = text[text.index(after: colon)...]
            if !coreSchemas.contains(urn.lowercased()) {
                schema = extensions.first { $0.lowercased() == urn.lowercased() } ?? urn
            }
        }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ isName($0) }) else { throw refuse() }
        return ScimPath(schema: schema, attribute: String(parts[0]), subAttribute: parts.count == 2 ? String(parts[1]) : nil)
    }

    /// ATTRNAME = ALPHA *(nameChar), with `$ref` allowed.
    static func isName(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first == "$" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "$") }
    }

    /// Whether string comparisons on it respect case (RFC 7643: `id`, `externalId` are caseExact).
    var isCaseExact: Bool {
        let name = attribute.lowercased()
        return schema == nil && subAttribute == nil && (name == "id" || name == "externalid")
    }

    /// The object the attribute lives in: the resource, or an extension's object in it.
    func container(in resource: [String: JSONValue]) -> [String: JSONValue]? {
        guard let schema else { return resource }
        if case .object(let fields) = Self.value(resource, schema) { return fields }
        return nil
    }

    /// The values the path names in a resource: each element of a multi-valued attribute, and with a
    /// sub-attribute each element's sub-attribute.
    func values(in resource: [String: JSONValue]) -> [JSONValue] {
        guard let container = container(in: resource), let value = Self.value(container, attribute) else { return [] }
        let elements: [JSONValue]
        if case .array(let items) = value { elements = items } else { elements = [value] }
        guard let subAttribute else { return elements }
        return elements.compactMap { element in
            if case .object(let fields) = element { return Self.value(fields, subAttribute) }
            return nil
        }
    }

    /// A key's value, the key's case ignored.
    static func value(_ object: [String: JSONValue], _ key: String) -> JSONValue? {
        if let exact = object[key] { return exact }
        let lowered = key.lowercased()
        return object.first { $0.key.lowercased() == lowered }?.value
    }

    /// The key as the object spells it, or `key` when absent.
    static func existingKey(_ object: [String: JSONValue], _ key: String) -> String {
        if object[key] != nil { return key }
        let lowered = key.lowercased()
        return object.keys.first { $0.lowercased() == lowered } ?? key
    }
}
