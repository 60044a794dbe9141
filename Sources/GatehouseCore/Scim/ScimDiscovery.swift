import Foundation

/// The discovery resources a SCIM client reads first (RFC 7644 section 4): what this service
/// provider supports (`ServiceProviderConfig`), its resource types, and the schemas of the
/// attributes it keeps (RFC 7643 sections 5 to 8).
enum ScimDiscovery {
    static let listSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

    static func serviceProviderConfig(base: String) -> [String: JSONValue] {
        [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
            "documentationUri": "https://github.com/gatehouse/gatehouse/blob/main/docs/scim.md",
            "patch": ["supported": true],
            "bulk": ["supported": false, "maxOperations": 0, "maxPayloadSize": 0],
            "filter": ["supported": true, "maxResults": .number(Double(ScimService.maxPageSize))],
            "changePassword": ["supported": false],
            "sort": ["supported": false],
            "etag": ["supported": true],
            "authenticationSchemes": [
                [
                    "type": "oauthbearertoken", "name": "Bearer token",
                    "description": "A token an administrator issued for this client (gatehouse scim-clients add).", "primary": true,
                ]
            ],
            "meta": ["resourceType": "ServiceProviderConfig", "location": .string("\(base)/ServiceProviderConfig")],
        ]
    }

    static func resourceTypes(base: String) -> [[String: JSONValue]] {
        [
            [
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"], "id": "User", "name": "User", "endpoint": "/Users",
                "description": "User Account", "schema": .string(ScimPath.coreUser),
                "schemaExtensions": [["schema": .string(ScimPath.enterpriseUser), "required": false]],
                "meta": ["resourceType": "ResourceType", "location": .string("\(base)/ResourceTypes/User")],
            ],
            [
                "schemas": ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"], "id": "Group", "name": "Group", "endpoint": "/Groups",
                "description": "Group", "schema": .string(ScimPath.coreGroup), "schemaExtensions": [],
                "meta": ["resourceType": "ResourceType", "location": .string("\(base)/ResourceTypes/Group")],
            ],
        ]
    }

    /// One attribute's definition.
    static func attribute(
        _ name: String, _ type: String = "string", multi: Bool = false, required: Bool = false, caseExact: Bool = false, mutability: String = "readWrite",
        returned: String = "default", uniqueness: String = "none", sub: [JSONValue] = [], canonical: [String] = [], description: String? = nil,
        references: [String] = ["external"]
    ) -> JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name), "type": .string(type), "multiValued": .bool(multi), "required": .bool(required), "caseExact": .bool(caseExact),
            "mutability": .string(mutability), "returned": .string(returned), "uniqueness": .string(uniqueness),
            "description": .string(description ?? name),
        ]
        if !sub.isEmpty { object["subAttributes"] = .array(sub) }
        if !canonical.isEmpty { object["canonicalValues"] = .array(canonical.map(JSONValue.string)) }
        if type == "reference" { object["referenceTypes"] = .array(references.map(JSONValue.string)) }
        return .object(object)
    }

    /// value, display, type, primary: the sub-attributes of most multi-valued attributes.
    static func multi(_ name: String, types: [String] = ["work", "home", "other"]) -> JSONValue {
        attribute(
            name, "complex", multi: true,
            sub: [attribute("value"), attribute("display"), attribute("type", canonical: types), attribute("primary", "boolean")])
    }

    static let userAttributeDefinitions: [JSONValue] = [
        attribute("userName", required: true, uniqueness: "server", description: "Unique identifier for the User, typically used to sign in."),
        attribute(
            "name", "complex",
            sub: ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"].map { attribute($0) }),
        attribute("displayName"), attribute("nickName"), attribute("profileUrl", "reference"), attribute("title"), attribute("userType"),
        attribute("preferredLanguage"), attribute("locale"), attribute("timezone"),
        attribute("active", "boolean", description: "false deprovisions: the account is disabled, its tokens revoked and its sessions ended."),
        multi("emails"), multi("phoneNumbers", types: ["work", "home", "mobile", "fax", "pager", "other"]), multi("ims"), multi("photos", types: ["photo", "thumbnail"]),
        attribute(
            "addresses", "complex", multi: true,
            sub: ["formatted", "streetAddress", "locality", "region", "postalCode", "country", "type"].map { attribute($0) } + [attribute("primary", "boolean")]),
        attribute(
            "groups", "complex", multi: true, mutability: "readOnly",
            sub: [
                attribute("value", mutability: "readOnly"), attribute("$ref", "reference", mutability: "readOnly", references: ["Group"]),
                attribute("display", mutability: "readOnly"),
                attribute("type", mutability: "readOnly", canonical: ["direct"]),
            ]),
        multi("entitlements"), multi("roles"), attribute("x509Certificates", "complex", multi: true, sub: [attribute("value", "binary")]),
    ]

    static let groupAttributeDefinitions: [JSONValue] = [
        attribute("displayName", required: true),
        attribute(
            "members", "complex", multi: true,
            sub: [
                attribute("value", mutability: "immutable"), attribute("$ref", "reference", mutability: "immutable", references: ["User"]),
                attribute("display", mutability: "readOnly"),
                attribute("type", mutability: "immutable", canonical: ["User"]),
            ]),
    ]

    static let enterpriseAttributeDefinitions: [JSONValue] = [
        attribute("employeeNumber"), attribute("costCenter"), attribute("organization"), attribute("division"), attribute("department"),
        attribute(
            "manager", "complex", sub: [attribute("value"), attribute("$ref", "reference", references: ["User"]), attribute("displayName", mutability: "readOnly")]),
    ]

    static func schemas(base: String) -> [[String: JSONValue]] {
        [
            schema(ScimPath.coreUser, "User", "User Account", userAttributeDefinitions, base: base),
            schema(ScimPath.coreGroup, "Group", "Group", groupAttributeDefinitions, base: base),
            schema(ScimPath.enterpriseUser, "EnterpriseUser", "Enterprise User", enterpriseAttributeDefinitions, base: base),
        ]
    }

    static func schema(_ id: String, _ name: String, _ description: String, _ attributes: [JSONValue], base: String) -> [String: JSONValue] {
        [
            "schemas": ["urn:ietf:params:scim:schemas:core:2.0:Schema"], "id": .string(id), "name": .string(name), "description": .string(description),
            "attributes": .array(attributes), "meta": ["resourceType": "Schema", "location": .string("\(base)/Schemas/\(id)")],
        ]
    }

    /// A ListResponse of every item (the discovery lists are never paged).
    static func list(_ items: [[String: JSONValue]]) -> [String: JSONValue] {
        [
            "schemas": [.string(listSchema)], "totalResults": .number(Double(items.count)), "startIndex": 1, "itemsPerPage": .number(Double(items.count)),
            "Resources": .array(items.map(JSONValue.object)),
        ]
    }
}
