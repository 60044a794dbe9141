/// A collection a plugin lets administrators manage at run time (`AdminResourceOffering`: an
/// issuer's public keys, an app's test registration keys; devices and certificate fingerprints soon). The
/// admin API (`/admin/v1/providers/{id}/{resource}`, `/admin/v1/apps/{app}/{resource}`), the CLI
/// (`gatehouse resources`) and the audit log reach these through `AdminService`, generically: the core
/// names no plugin's resource, and each change is an audit event the plugin names, prefixed with its
/// type (`<type>.<event>`). Declared with its handlers: what lists, adds and removes its items.
public struct AdminResource: Sendable {
    /// Whether the resource belongs to a provider instance or to an app (kept by the app's provider).
    public enum Scope: String, Sendable, Hashable, Codable { case provider, app }

    /// The path segment and CLI name, e.g. `keys`.
    public var name: String
    /// Whether it belongs to a provider instance or to an app.
    public var scope: Scope
    /// What it is, for the admin API reference and the CLI.
    public var summary: String
    /// What `create` takes (empty: the plugin makes the item from nothing, like a generated key).
    public var createFields: [AdminField]
    /// The path components that name one item, in order (`issuer`, `kid`); empty: items cannot be removed.
    public var itemKey: [String]
    /// The item fields a table shows, in order.
    public var columns: [String]
    /// Whether removing an item deserves a second thought (the console asks again).
    public var dangerous: Bool
    /// Every item; `app` is the app for an app-scoped resource.
    public var list: @Sendable (_ app: AppView?) async throws -> [JSONValue]
    /// Adds an item from the admin's fields (refusals are `invalid_request` naming the field); nil
    /// when administrators add none (items come from elsewhere, such as the credentials people set up
    /// at sign-in: the broker refuses `create` and the console offers no form).
    public var create: (@Sendable (_ fields: [String: JSONValue], _ app: AppView?, _ admin: String) async throws -> AdminChange)?
    /// Removes (or revokes) the item `key` names, answering `not_found` when there is none; nil when
    /// items cannot be removed.
    public var delete: (@Sendable (_ key: [String], _ app: AppView?, _ admin: String) async throws -> AdminChange)?
    /// For a provider's resource of people's credentials (an authenticator app, passkeys): the item
    /// field holding the id of the account an item belongs to. The console's user page lists that
    /// account's items with their remove buttons.
    public var accountField: String?

    /// A resource.
    public init(
        name: String, scope: Scope, summary: String, createFields: [AdminField] = [], itemKey: [String] = [], columns: [String] = [], dangerous: Bool = false,
        accountField: String? = nil, list: @escaping @Sendable (_ app: AppView?) async throws -> [JSONValue],
        create: (@Sendable (_ fields: [String: JSONValue], _ app: AppView?, _ admin: String) async throws -> AdminChange)? = nil,
        delete: (@Sendable (_ key: [String], _ app: AppView?, _ admin: String) async throws -> AdminChange)? = nil
    ) {
        self.name = name
        self.scope = scope
        self.summary = summary
        self.createFields = createFields
        self.itemKey = itemKey
        self.columns = columns
        self.dangerous = dangerous
        self.accountField = accountField
        self.list = list
        self.create = create
        self.delete = delete
    }

    /// Whether administrators add items.
    public var creatable: Bool { create != nil }
}

extension AdminResource: Encodable {
    private enum CodingKeys: String, CodingKey { case name, scope, summary, createFields, itemKey, columns, dangerous, creatable, accountField }

    /// The declaration, as the admin API describes it (without the handlers).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(scope, forKey: .scope)
        try container.encode(summary, forKey: .summary)
        try container.encode(createFields, forKey: .createFields)
        try container.encode(itemKey, forKey: .itemKey)
        try container.encode(columns, forKey: .columns)
        try container.encode(dangerous, forKey: .dangerous)
        try container.encode(creatable, forKey: .creatable)
        try container.encodeIfPresent(accountField, forKey: .accountField)
    }
}

/// One field an admin gives when creating an item.
public struct AdminField: Sendable, Hashable, Codable {
    /// The field's name.
    public var name: String
    /// What to give, for the CLI's help.
    public var summary: String
    /// A multi-line value the CLI reads from a file (`pem=@public.pem`).
    public var fromFile: Bool

    /// A field.
    public init(name: String, summary: String, fromFile: Bool = false) {
        self.name = name
        self.summary = summary
        self.fromFile = fromFile
    }
}

/// What a create or delete did: the answer for the admin, and the audit event the plugin names.
public struct AdminChange: Sendable {
    /// What the admin API answers (the new item, or what was removed).
    public var item: JSONValue
    /// A secret shown this once and never stored (a generated private key); the CLI prints it alone
    /// on standard output. It is also inside `item`.
    public var shownOnce: String?
    /// The plugin's own event name (`key_added`); the audit log records it as `<type>.<event>`.
    public var event: String
    /// Audit details; never a secret.
    public var details: [String: String]
    /// The account the change concerns (a person's credential reset), so that the audit log finds
    /// it under that person.
    public var accountID: String?

    /// A change.
    public init(item: JSONValue, shownOnce: String? = nil, event: String, details: [String: String] = [:], accountID: String? = nil) {
        self.item = item
        self.shownOnce = shownOnce
        self.event = event
        self.details = details
        self.accountID = accountID
    }
}
