import Foundation

/// SCIM 2.0 provisioning (RFC 7644) for the clients an administrator issued tokens to: Users and
/// Groups with create, read, replace, patch, delete, filtering and paging, versions as ETags, and the
/// discovery resources. A user's `active: false` (or its deletion) disables its account through the
/// one disabled state, ending its sessions and tokens; `active: true` enables it again.
public struct ScimService: Sendable {
    static let defaultPageSize = 100
    static let maxPageSize = 1000

    let store: any BrokerStore
    let clock: any BrokerClock
    let oauth: OAuthService
    /// `<issuer>/scim/v2`: where resources are located.
    public let base: String
    public let enabled: Bool
    /// `scim.links`: a user provisioned after the person already signed in joins that account.
    let links: [ScimConfig.Link]

    public init(store: any BrokerStore, clock: any BrokerClock, oauth: OAuthService, issuer: String, enabled: Bool, links: [ScimConfig.Link] = []) {
        self.store = store
        self.clock = clock
        self.oauth = oauth
        self.base = issuer + "/scim/v2"
        self.enabled = enabled
        self.links = links
    }

    /// What one SCIM request answers: a status, a body, and a resource's ETag and location.
    public struct Answer: Sendable {
        public var status: Int
        public var body: [String: JSONValue]?
        public var etag: String?
        public var location: String?
    }

    // MARK: - Clients

    /// The client a bearer token belongs to. Tokens are looked up by their SHA-256, never compared in clear.
    public func client(bearer token: String?) async throws -> ScimClientRecord {
        guard enabled else { throw ScimError(404, nil, "SCIM provisioning is off (scim.enabled in the config).") }
        guard let token, !token.isEmpty, token.utf8.count <= 512, let client = try await store.scimClient(tokenDigest: SecretDigest.sha256Hex(token)) else {
            throw ScimError.unauthorized
        }
        return client
    }

    /// Issues a client and its bearer token (shown once).
    public func createClient(id: String, name: String?, createdBy: String, auditDetails: [String: String]) async throws -> (client: ScimClientRecord, token: String) {
        guard Identifier.isValid(id) else { throw BrokerError(.invalidRequest, .badRequest, "The SCIM client id: \(Identifier.rule).") }
        let token = RandomToken.make()
        let client = ScimClientRecord(id: id, name: name ?? id, tokenDigest: SecretDigest.sha256Hex(token), createdAt: clock.now, createdBy: createdBy)
        guard try await store.insertScimClient(client) else { throw BrokerError(.conflict, .conflict, "A SCIM client '\(id)' exists already.") }
        try await store.appendAudit(AuditEvent(time: clock.now, type: "scim.client.created", details: auditDetails.merging(["scimClient": id]) { a, _ in a }))
        return (client, token)
    }

    /// A new token for a client (the old one stops at once); its users and groups stay.
    public func rotateClientToken(id: String, auditDetails: [String: String]) async throws -> String {
        let token = RandomToken.make()
        guard try await store.replaceScimClientToken(id: id, tokenDigest: SecretDigest.sha256Hex(token)) else {
            throw BrokerError(.notFound, .notFound, "No SCIM client '\(id)'.")
        }
        try await store.appendAudit(AuditEvent(time: clock.now, type: "scim.client.token_rotated", details: auditDetails.merging(["scimClient": id]) { a, _ in a }))
        return token
    }

    /// Removes a client: its token stops at once; the resources it kept go, the accounts stay.
    public func deleteClient(id: String, auditDetails: [String: String]) async throws {
        guard try await store.deleteScimClient(id: id) else { throw BrokerError(.notFound, .notFound, "No SCIM client '\(id)'.") }
        try await store.appendAudit(AuditEvent(time: clock.now, type: "scim.client.deleted", details: auditDetails.merging(["scimClient": id]) { a, _ in a }))
    }

    // MARK: - Discovery

    public func serviceProviderConfig() -> Answer { Answer(status: 200, body: ScimDiscovery.serviceProviderConfig(base: base)) }

    public func resourceTypes(id: String?) throws -> Answer {
        let types = ScimDiscovery.resourceTypes(base: base)
        guard let id else { return Answer(status: 200, body: ScimDiscovery.list(types)) }
        guard let type = types.first(where: { $0["id"] == .string(id) }) else { throw ScimError.notFound("No resource type '\(id)'.") }
        return Answer(status: 200, body: type)
    }

    public func schemas(id: String?) throws -> Answer {
        let schemas = ScimDiscovery.schemas(base: base)
        guard let id else { return Answer(status: 200, body: ScimDiscovery.list(schemas)) }
        guard let schema = schemas.first(where: { $0["id"]?.stringValue?.lowercased() == id.lowercased() }) else { throw ScimError.notFound("No schema '\(id)'.") }
        return Answer(status: 200, body: schema)
    }

    // MARK: - Reading

    public func get(_ kind: ScimKind, id: String, client: ScimClientRecord, attributes: [String] = [], excluded: [String] = []) async throws -> Answer {
        guard let record = try await store.scimResource(id: id, clientID: client.id, kind: kind) else { throw notFound(kind, id) }
        let json = try await rendered([record], client: client).first ?? [:]
        return Answer(
            status: 200, body: ScimResource.projected(json, attributes: attributes, excluded: excluded), etag: ScimResource.etag(record.version),
            location: location(record))
    }

    /// A page of the client's resources that match the filter (RFC 7644 section 3.4.2), oldest first.
    public func list(
        _ kind: ScimKind, client: ScimClientRecord, filter text: String?, startIndex: Int?, count: Int?, attributes: [String] = [], excluded: [String] = []
    ) async throws -> Answer {
        let filter = try Self.filter(text)
        let candidates: [ScimResourceRecord]
        if kind == .user, let (attribute, value) = filter?.simpleEquality, let linkAttribute = ScimLinkAttribute(rawValue: attribute) ?? caseless(attribute) {
            // What Entra ID and Okta ask before every create: one index lookup, not a scan.
            candidates = try await store.scimUsers(matching: linkAttribute, value: value).filter { $0.clientID == client.id }
        } else {
            candidates = try await store.scimResources(clientID: client.id, kind: kind)
        }
        let all = try await rendered(candidates, client: client)
        return page(
            filter.map { filter in all.filter { filter.matches(Self.matchable($0)) } } ?? all, startIndex: startIndex, count: count, attributes: attributes,
            excluded: excluded)
    }

    /// A search at the root (`POST /.search`): the client's Users, then its Groups, filtered and paged as one list.
    public func listAll(
        client: ScimClientRecord, filter text: String?, startIndex: Int?, count: Int?, attributes: [String] = [], excluded: [String] = []
    ) async throws -> Answer {
        let filter = try Self.filter(text)
        var all: [[String: JSONValue]] = []
        for kind in ScimKind.allCases { all += try await rendered(try await store.scimResources(clientID: client.id, kind: kind), client: client) }
        return page(
            filter.map { filter in all.filter { filter.matches(Self.matchable($0)) } } ?? all, startIndex: startIndex, count: count, attributes: attributes,
            excluded: excluded)
    }

    /// The `filter` parameter parsed; nil when absent or blank.
    static func filter(_ text: String?) throws(ScimError) -> ScimFilter? {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return try ScimFilter.parse(text)
    }

    /// A resource as filters see it: a user that never said `active` is active (`active eq true` finds it).
    static func matchable(_ resource: [String: JSONValue]) -> [String: JSONValue] {
        guard resource["active"] == nil, resource["meta"]?.objectValue?["resourceType"] == "User" else { return resource }
        var completed = resource
        completed["active"] = .bool(true)
        return completed
    }

    /// One page of a filtered list, as a ListResponse.
    func page(_ matching: [[String: JSONValue]], startIndex: Int?, count: Int?, attributes: [String], excluded: [String]) -> Answer {
        let start = max(startIndex ?? 1, 1)
        let size = min(max(count ?? Self.defaultPageSize, 0), Self.maxPageSize)
        let page = Array(matching.dropFirst(start - 1).prefix(size))
        return Answer(
            status: 200,
            body: [
                "schemas": [.string(ScimDiscovery.listSchema)], "totalResults": .number(Double(matching.count)), "startIndex": .number(Double(start)),
                "itemsPerPage": .number(Double(page.count)),
                "Resources": .array(page.map { .object(ScimResource.projected($0, attributes: attributes, excluded: excluded)) }),
            ])
    }

    private func caseless(_ attribute: String) -> ScimLinkAttribute? {
        ScimLinkAttribute.allCases.first { $0.rawValue.lowercased() == attribute.lowercased() }
    }

    /// The JSON of records of one kind: users with the groups that hold them, groups with their
    /// members' names.
    func rendered(_ records: [ScimResourceRecord], client: ScimClientRecord) async throws -> [[String: JSONValue]] {
        guard let first = records.first else { return [] }
        if first.kind == .user {
            let groups = try await store.scimResources(clientID: client.id, kind: .group)
            return records.map { record in ScimResource.json(record, base: base, groups: groups.filter { $0.members.contains(record.id) }) }
        }
        return records.map { ScimResource.json($0, base: base) }
    }

    // MARK: - Writing

    /// POST: a new User (with its account) or Group.
    public func create(_ kind: ScimKind, body: JSONValue, client: ScimClientRecord) async throws -> Answer {
        let object = try Self.object(body, kind: kind)
        let now = clock.now
        var record = ScimResourceRecord(
            id: UUID().uuidString.lowercased(), clientID: client.id, kind: kind, name: "", externalID: nil, accountID: nil, active: true, attributes: [:],
            members: [], version: 1, createdAt: now, updatedAt: now)
        var account: Account?
        switch kind {
        case .user:
            let user = try ScimResource.checkedUser(ScimResource.attributes(of: object, kind: .user))
            record.attributes = user.attributes
            record.name = user.userName
            record.externalID = user.externalID
            record.active = user.active
            if let existing = try await accountSignedInAlready(userName: user.userName, externalID: user.externalID, client: client) {
                // The person signed in before the IdP provisioned them: the user is that account.
                record.accountID = existing
            } else {
                var made = Account(id: UUID().uuidString.lowercased(), username: user.userName, createdAt: now)
                if !user.active {
                    // Provisioned inactive: the account is made disabled (it holds nothing to revoke yet).
                    made.disabledAt = now
                    made.disabledBy = "scim:\(client.id)"
                }
                record.accountID = made.id
                account = made
            }
        case .group:
            let group = try ScimResource.checkedGroup(ScimResource.attributes(of: object, kind: .group))
            record.attributes = group.attributes
            record.name = group.displayName
            record.externalID = group.externalID
            record.members = try await checkedMembers(group.members, client: client)
        }
        guard try await store.insertScimResource(record, account: account) else {
            throw ScimError.uniqueness("The userName '\(record.name)' is taken.")
        }
        if let account, account.isDisabled {
            try await store.appendAudit(
                AuditEvent(time: now, type: "account.disabled", accountID: account.id, details: ["scimClient": client.id, "reason": "scim_inactive"]))
        } else if account == nil, kind == .user, !record.active, let accountID = record.accountID {
            _ = try await oauth.disableAccount(id: accountID, reason: "scim_inactive", by: "scim:\(client.id)", actor: ["scimClient": client.id])
        }
        if account == nil, kind == .user, let accountID = record.accountID {
            try await store.appendAudit(
                AuditEvent(time: now, type: "account.linked", accountID: accountID, details: ["by": "scim", "scimClient": client.id, "scimUser": record.id]))
        }
        try await audit("scim.\(kind.rawValue.lowercased()).created", record, client: client)
        let json = try await rendered([record], client: client).first ?? [:]
        return Answer(status: 201, body: json, etag: ScimResource.etag(record.version), location: location(record))
    }

    /// The account a new user joins instead of a new one: the one account whose identity a `subject`
    /// link rule matches (`userName` or `externalId` = that provider's subject: a SAML NameID, an OIDC
    /// `sub`, AD's objectGUID) or a `username` rule matches (an account an administrator made that
    /// nobody signed in to yet, whose identity at that provider has the username), when no SCIM user holds it yet. Nil for none or several: no guess.
    func accountSignedInAlready(userName: String, externalID: String?, client: ScimClientRecord) async throws -> String? {
        var accounts: Set<String> = []
        for link in links where link.claim != .email && (link.client == nil || link.client == client.id) {
            guard let value = link.attribute == .userName ? userName : externalID, !value.isEmpty else { continue }
            if link.claim == .subject, let found = try await store.identityLink(providerID: link.provider, subject: value) { accounts.insert(found.accountID) }
            if link.claim == .username {
                // Only an account an administrator made and nobody has signed in to yet (`users add`):
                // the username its identity at the rule's provider has. One that signed in is joined
                // at sign-in, by a subject rule, or not at all.
                let marks = FirstSignInMarks(store: store, clock: clock)
                for account in try await store.accounts(matching: value, limit: 200, offset: 0) where account.username.lowercased() == value.lowercased() {
                    let atProvider = try await store.identityLinks(accountID: account.id).filter { $0.providerID == link.provider }
                    guard atProvider.contains(where: { $0.claims.preferredUsername?.lowercased() == value.lowercased() }),
                        try await marks.isMarked(account.id)
                    else { continue }
                    accounts.insert(account.id)
                }
            }
        }
        guard accounts.count == 1, let accountID = accounts.first, try await store.scimUsers(accountID: accountID).isEmpty else { return nil }
        return accountID
    }

    /// PUT: the resource as the body says (its id, account and creation stay).
    public func replace(_ kind: ScimKind, id: String, body: JSONValue, ifMatch: String?, client: ScimClientRecord) async throws -> Answer {
        let object = try Self.object(body, kind: kind)
        return try await update(kind, id: id, ifMatch: ifMatch, client: client, event: "replaced") { _ in ScimResource.attributes(of: object, kind: kind) }
    }

    /// PATCH: the operations applied to the resource as it is.
    public func patch(_ kind: ScimKind, id: String, body: JSONValue, ifMatch: String?, client: ScimClientRecord) async throws -> Answer {
        let patch = try ScimPatch(body)
        return try await update(kind, id: id, ifMatch: ifMatch, client: client, event: "patched") { (current: ScimResourceRecord) throws(ScimError) in
            var attributes = current.attributes
            if let externalID = current.externalID { attributes["externalId"] = .string(externalID) }
            if kind == .user, !current.active { attributes["active"] = .bool(false) }
            if kind == .group { attributes["members"] = .array(current.members.map { .object(["value": .string($0)]) }) }
            // What a PATCH makes is kept only as far as a PUT's body would be (no `password`, no
            // attributes outside the schemas).
            return ScimResource.attributes(of: try patch.applied(to: attributes, readOnly: ScimResource.readOnly), kind: kind)
        }
    }

    /// Replaces a resource with the attributes `change` makes of the current one, under its version.
    private func update(
        _ kind: ScimKind, id: String, ifMatch: String?, client: ScimClientRecord, event: String,
        _ change: (ScimResourceRecord) throws(ScimError) -> [String: JSONValue]
    ) async throws -> Answer {
        guard let current = try await store.scimResource(id: id, clientID: client.id, kind: kind) else { throw notFound(kind, id) }
        try Self.check(ifMatch, current)
        var record = current
        record.updatedAt = clock.now
        let attributes = try change(current)
        switch kind {
        case .user:
            let user = try ScimResource.checkedUser(attributes)
            record.attributes = user.attributes
            record.name = user.userName
            record.externalID = user.externalID
            record.active = user.active
        case .group:
            let group = try ScimResource.checkedGroup(attributes)
            record.attributes = group.attributes
            record.name = group.displayName
            record.externalID = group.externalID
            record.members = try await checkedMembers(group.members, client: client)
        }
        // The account first: a deprovisioning whose disable fails leaves the user as it was, so the
        // client's retry is a change again and disables again.
        try await settleAccount(of: record, was: current, client: client)
        switch try await store.replaceScimResource(record, expectedVersion: current.version) {
        case .written: record.version = current.version + 1
        case .versionMismatch:
            throw ifMatch == nil
                ? ScimError(409, nil, "The resource changed while this request ran; read it again and retry.")
                : ScimError.preconditionFailed("The resource changed since the version in If-Match.")
        case .nameTaken: throw ScimError.uniqueness("The userName '\(record.name)' is taken.")
        case .gone: throw notFound(kind, id)
        }
        try await audit("scim.\(kind.rawValue.lowercased()).\(event)", record, client: client)
        let json = try await rendered([record], client: client).first ?? [:]
        return Answer(status: 200, body: json, etag: ScimResource.etag(record.version), location: location(record))
    }

    /// DELETE: the resource goes; a user's account is disabled (deprovisioned) and stays for the audit trail.
    public func delete(_ kind: ScimKind, id: String, ifMatch: String?, client: ScimClientRecord) async throws -> Answer {
        if let ifMatch {
            guard let current = try await store.scimResource(id: id, clientID: client.id, kind: kind) else { throw notFound(kind, id) }
            try Self.check(ifMatch, current)
        }
        // Disabled before the resource goes: a disable that fails leaves the resource for the retry.
        if kind == .user, let current = try await store.scimResource(id: id, clientID: client.id, kind: kind), let accountID = current.accountID {
            _ = try await oauth.disableAccount(id: accountID, reason: "scim_deleted", by: "scim:\(client.id)", actor: ["scimClient": client.id])
        }
        guard var deleted = try await store.deleteScimResource(id: id, clientID: client.id, kind: kind, now: clock.now) else { throw notFound(kind, id) }
        deleted.updatedAt = clock.now
        try await audit("scim.\(kind.rawValue.lowercased()).deleted", deleted, client: client)
        return Answer(status: 204)
    }

    /// Makes the account agree with its user's new `active`, before the user is written. Turning
    /// inactive disables the account in full (its sessions and tokens too) even if it is disabled
    /// already: a disable that failed half-way left the user active, so the client's retry runs it
    /// all again. A re-activation lifts only this client's own disable, never an administrator's.
    private func settleAccount(of record: ScimResourceRecord, was previous: ScimResourceRecord, client: ScimClientRecord) async throws {
        guard let accountID = record.accountID, let account = try await store.account(id: accountID) else { return }
        let by = "scim:\(client.id)"
        if !record.active, previous.active || !account.isDisabled {
            _ = try await oauth.disableAccount(id: accountID, reason: "scim_inactive", by: by, actor: ["scimClient": client.id])
        } else if record.active, account.isDisabled, account.disabledBy == by {
            _ = try await oauth.enableAccount(id: accountID, reason: "scim_active", onlyIfDisabledBy: by, actor: ["scimClient": client.id])
        }
    }

    /// Group members must be users of the same client.
    private func checkedMembers(_ members: [String], client: ScimClientRecord) async throws -> [String] {
        guard !members.isEmpty else { return [] }
        let users = Set(try await store.scimResources(clientID: client.id, kind: .user).map(\.id))
        if let unknown = members.first(where: { !users.contains($0) }) { throw ScimError.invalidValue("The member '\(unknown)' is not a User of this client.") }
        return members
    }

    private func audit(_ type: String, _ record: ScimResourceRecord, client: ScimClientRecord) async throws {
        try await store.appendAudit(
            AuditEvent(
                time: clock.now, type: type, accountID: record.accountID,
                details: ["scimClient": client.id, "scimId": record.id, "name": record.name, "active": String(record.active)]))
    }

    private func location(_ record: ScimResourceRecord) -> String {
        "\(base)/\(record.kind == .user ? "Users" : "Groups")/\(record.id)"
    }

    private func notFound(_ kind: ScimKind, _ id: String) -> ScimError {
        .notFound("No \(kind.rawValue) '\(id)'.")
    }

    /// If-Match: `*` or the resource's ETag (weak or strong form).
    static func check(_ ifMatch: String?, _ record: ScimResourceRecord) throws(ScimError) {
        guard let ifMatch else { return }
        let tags = ifMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let current = ScimResource.etag(record.version)
        guard tags.contains(where: { $0 == "*" || $0 == current || "W/" + $0 == current }) else {
            throw .preconditionFailed("The resource is at version \(current), not \(ifMatch).")
        }
    }

    /// The body as an object whose `schemas`, when given, name the resource's schema.
    static func object(_ body: JSONValue, kind: ScimKind) throws(ScimError) -> [String: JSONValue] {
        guard case .object(let object) = body else { throw .invalidSyntax("The body must be a JSON object.") }
        if case .array(let schemas) = ScimPath.value(object, "schemas") {
            let core = (kind == .user ? ScimPath.coreUser : ScimPath.coreGroup).lowercased()
            guard schemas.contains(where: { $0.stringValue?.lowercased() == core }) else {
                throw .invalidSyntax("The body's schemas must include \(kind == .user ? ScimPath.coreUser : ScimPath.coreGroup).")
            }
        }
        return object
    }
}
