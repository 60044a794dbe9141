/// A SCIM error (RFC 7644 section 3.12): an HTTP status, a `scimType` where the RFC names one, and
/// a sentence for the client's administrator. The server answers it as SCIM's error resource.
public struct ScimError: Error, Sendable, Equatable {
    public var status: Int
    public var scimType: String?
    public var detail: String

    public init(_ status: Int, _ scimType: String?, _ detail: String) {
        self.status = status
        self.scimType = scimType
        self.detail = detail
    }

    static func invalidFilter(_ detail: String) -> ScimError { ScimError(400, "invalidFilter", detail) }
    static func invalidSyntax(_ detail: String) -> ScimError { ScimError(400, "invalidSyntax", detail) }
    static func invalidValue(_ detail: String) -> ScimError { ScimError(400, "invalidValue", detail) }
    static func invalidPath(_ detail: String) -> ScimError { ScimError(400, "invalidPath", detail) }
    static func noTarget(_ detail: String) -> ScimError { ScimError(400, "noTarget", detail) }
    static func mutability(_ detail: String) -> ScimError { ScimError(400, "mutability", detail) }
    static func uniqueness(_ detail: String) -> ScimError { ScimError(409, "uniqueness", detail) }
    static func notFound(_ detail: String) -> ScimError { ScimError(404, nil, detail) }
    static func preconditionFailed(_ detail: String) -> ScimError { ScimError(412, nil, detail) }
    static let unauthorized = ScimError(401, nil, "A SCIM client's bearer token is required (issued with `gatehouse scim-clients add`).")
}
