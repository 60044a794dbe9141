import Foundation

/// Apps and their policies.
public protocol AppStore: Sendable {
    /// The app, if it exists.
    func app(id: String) async throws -> App?
    func apps() async throws -> [App]
    /// Creates the app, or replaces it when it exists and is still managed by the config file.
    /// Returns what the store holds afterwards (an admin-managed app is left as it is).
    func seedApp(_ app: App) async throws -> App
    /// Adds a new app; false when the id is taken.
    func insertApp(_ app: App) async throws -> Bool
    /// Replaces the app if its stored version is still `app.version` (the stored version becomes
    /// `app.version + 1`); false when someone else changed or deleted it first.
    func updateApp(_ app: App) async throws -> Bool
    func deleteApp(id: String) async throws -> Bool
}

/// Accounts and the identities linked to them.
public protocol AccountStore: Sendable {
    /// The account, if it exists.
    func account(id: String) async throws -> Account?
    /// The link of a provider's subject, if any.
    func identityLink(providerID: String, subject: String) async throws -> IdentityLink?
    /// Every identity linked to the account.
    func identityLinks(accountID: String) async throws -> [IdentityLink]
    /// The accounts (ids, sorted) with an identity link whose provider vouched for `email`
    /// (`email_verified`), compared without regard to case.
    func accountIDs(withVerifiedEmail email: String) async throws -> [String]
    func accounts(limit: Int, offset: Int) async throws -> [Account]
    /// Accounts whose username contains `search` (ignoring case), or whose id is `search`, oldest first.
    func accounts(matching search: String, limit: Int, offset: Int) async throws -> [Account]
    /// In one transaction: the account linked to this identity (refreshing the link's claims and
    /// last sign-in), or a new account and link when there is none. `created` tells which.
    func linkIdentity(_ identity: ExternalIdentity, now: Date) async throws -> (account: Account, created: Bool)
    /// The account this identity is linked to, read without writing anything: the first half of a
    /// returning person's `linkIdentity`, for callers that write the link's refresh
    /// (`refreshIdentityLink`) beside their own writes instead of before them.
    func linkedAccount(providerID: String, subject: String) async throws -> Account?
    /// Refreshes an existing link's claims and last sign-in; nothing when the link is gone.
    func refreshIdentityLink(_ identity: ExternalIdentity, now: Date) async throws
    /// Replaces an existing link's claims (what a recheck read), leaving its last sign-in; nothing
    /// when the link is gone.
    func updateIdentityLinkClaims(providerID: String, subject: String, claims: IdentityClaims) async throws
    /// Links one more identity to an existing account; false when that identity belongs to another
    /// account (linking it again to the same account is a success).
    func addIdentityLink(_ identity: ExternalIdentity, accountID: String, now: Date) async throws -> Bool
    /// Removes one identity link; the account is deleted with its tokens when no link remains.
    /// Returns whether a link existed.
    func unlinkIdentity(providerID: String, subject: String) async throws -> Bool
    func deleteAccount(id: String) async throws -> Bool
    /// Sets the account's own profile and whether it still waits for confirmation; false when the
    /// account is gone.
    func updateAccountProfile(id: String, profile: AccountProfile?, pending: Bool) async throws -> Bool
    /// Disables the account from `at` on (`by` whom), or enables it (`at` nil). A disabled account
    /// keeps when it was first disabled, and by whom, except that `admin` always takes it over.
    /// False when the account is gone.
    func setAccountDisabled(id: String, at: Date?, by: String?) async throws -> Bool
}

/// SCIM provisioning: the clients that provision (bearer tokens, by digest) and the users and groups
/// each keeps. Resources are scoped to their client: one client never sees another's.
public protocol ScimStore: Sendable {
    /// False when the id is taken.
    func insertScimClient(_ client: ScimClientRecord) async throws -> Bool
    func scimClient(tokenDigest: String) async throws -> ScimClientRecord?
    func scimClients() async throws -> [ScimClientRecord]
    /// Gives the client a new token digest (the old token stops). False when there is no such client.
    func replaceScimClientToken(id: String, tokenDigest: String) async throws -> Bool
    /// Deletes the client and the resources it kept (the accounts stay). False when there was none.
    func deleteScimClient(id: String) async throws -> Bool
    /// Inserts a resource and, for a user, its new account in the same transaction. False when the
    /// client has a user with that `userName` (any case) already.
    func insertScimResource(_ resource: ScimResourceRecord, account: Account?) async throws -> Bool
    func scimResource(id: String, clientID: String, kind: ScimKind) async throws -> ScimResourceRecord?
    /// Every resource of a kind the client keeps, oldest first.
    func scimResources(clientID: String, kind: ScimKind) async throws -> [ScimResourceRecord]
    /// Replaces a resource (its version grows by one) if its version is still `expectedVersion`.
    func replaceScimResource(_ resource: ScimResourceRecord, expectedVersion: Int) async throws -> ScimWrite
    /// Deletes a resource (a user also leaves the client's groups, whose versions move on); answers
    /// what was deleted.
    func deleteScimResource(id: String, clientID: String, kind: ScimKind, now: Date) async throws -> ScimResourceRecord?
    /// The users provisioned for an account, by any client.
    func scimUsers(accountID: String) async throws -> [ScimResourceRecord]
    /// The names of the groups holding the account's provisioned users (any client), sorted: one
    /// indexed read, at every token issued with the `groups` scope.
    func scimGroupNames(accountID: String) async throws -> [String]
    /// The users any client provisioned whose `userName` (any case) or `externalId` is `value`.
    func scimUsers(matching attribute: ScimLinkAttribute, value: String) async throws -> [ScimResourceRecord]
}

/// Flows in progress, written with optimistic concurrency: a write names the version it read. The
/// store sees each flow sealed (`SealedFlow`): the engine seals and opens them.
public protocol FlowStore: Sendable {
    func insertFlow(_ flow: SealedFlow) async throws
    /// The flow if it exists and has not expired at `now`.
    func sealedFlow(id: String, now: Date) async throws -> SealedFlow?
    /// Replaces the flow if its stored version is still `expectedVersion`; the stored row becomes
    /// `flow` (whose version is the next one). False when another writer got there first or the flow
    /// is gone.
    func updateFlow(_ flow: SealedFlow, expectedVersion: Int) async throws -> Bool
    /// Deletes the flow if its stored version is still `version`; false otherwise.
    func deleteFlow(id: String, version: Int) async throws -> Bool
    func deleteExpiredFlows(now: Date) async throws -> Int
    func countFlows(now: Date) async throws -> Int
}

/// A refresh token as stored: only its digest, never the token.
public struct RefreshTokenRecord: Sendable, Hashable, Codable {
    public var digest: String
    /// Every token rotated from one sign-in shares a family; reuse of a rotated token revokes the family.
    public var familyID: String
    public var accountID: String
    public var appID: String
    public var scopes: [String]
    public var issuedAt: Date
    public var expiresAt: Date
    /// When the person actually signed in (kept through rotations, for `auth_time`).
    public var authTime: Date
    /// `amr` values of that sign-in.
    public var methods: [String]
    public var identityProvider: String?
    /// Set when the token was exchanged for a new one; presenting it again is reuse.
    public var usedAt: Date?
    public var revokedAt: Date?
    /// The sign-in key the sign-in was proven with: removing its device revokes the token.
    public var signInKeyID: String?
    /// The DPoP key the token is bound to (public clients, RFC 9449 section 5): a refresh needs a
    /// proof made with it.
    public var dpopJKT: String?
    /// The digest of the installation the sign-in named (`AccessTokenClaims.installation`), kept
    /// through rotations.
    public var installation: String?
    /// The browser session the sign-in belongs to: logout revokes the token unless it is `offline_access`.
    public var sessionID: String?

    public init(
        digest: String, familyID: String, accountID: String, appID: String, scopes: [String], issuedAt: Date, expiresAt: Date,
        authTime: Date, methods: [String] = [], identityProvider: String? = nil, usedAt: Date? = nil, revokedAt: Date? = nil,
        signInKeyID: String? = nil, dpopJKT: String? = nil, installation: String? = nil, sessionID: String? = nil
    ) {
        self.sessionID = sessionID
        self.installation = installation
        self.signInKeyID = signInKeyID
        self.dpopJKT = dpopJKT
        self.digest = digest
        self.familyID = familyID
        self.accountID = accountID
        self.appID = appID
        self.scopes = scopes
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.authTime = authTime
        self.methods = methods
        self.identityProvider = identityProvider
        self.usedAt = usedAt
        self.revokedAt = revokedAt
    }
}

/// Refresh tokens, by digest.
public protocol RefreshTokenStore: Sendable {
    func insertRefreshToken(_ token: RefreshTokenRecord) async throws
    func refreshToken(digest: String) async throws -> RefreshTokenRecord?
    /// In one transaction: marks the token `usedDigest` used if it is not used or revoked yet, and
    /// stores its replacement. False (and nothing written) when another request used it first.
    func rotateRefreshToken(usedDigest: String, replacement: RefreshTokenRecord, now: Date) async throws -> Bool
    /// Revokes every live token of the family; returns how many.
    func revokeRefreshTokenFamily(familyID: String, now: Date) async throws -> Int
    /// Revokes every live token of the account (its password was reset); returns how many.
    func revokeRefreshTokens(accountID: String, now: Date) async throws -> Int
    /// Revokes every live token the account holds from one app and deletes the unredeemed
    /// authorization codes it was issued (the person revoked the app's consent); answers the families
    /// the tokens belonged to, and apart from them the families of codes already redeemed but not
    /// among them (their tokens may be written a moment later), so that they and their access tokens
    /// can be revoked too.
    func revokeRefreshTokens(accountID: String, appID: String, now: Date) async throws -> (families: [String], redeemedCodeFamilies: [String])
    /// Whether the family still has a token that is neither used, revoked nor expired at `now`: the
    /// sign-in it came from can still be renewed.
    func isRefreshTokenFamilyLive(familyID: String, now: Date) async throws -> Bool
    /// Revokes every live refresh token of an app and deletes its unredeemed authorization codes and
    /// open flows (the app was disabled); returns how many refresh tokens.
    func revokeGrants(appID: String, now: Date) async throws -> Int
    func deleteExpiredRefreshTokens(now: Date) async throws -> Int
}

/// A token-signing key pair as stored.
public struct SigningKeyRecord: Sendable, Hashable, Codable {
    public var kid: String
    public var algorithm: SigningAlgorithm
    public var privateKeyPEM: String
    public var createdAt: Date
    /// Set when a newer key took over; the key stays published until tokens it signed have expired.
    public var retiredAt: Date?
    /// A rotated-in key is published at once but signs only from this time, so that every node (and
    /// every client that reads the JWKS) knows it before the first token it signs; nil: from creation.
    public var activatesAt: Date?

    public init(kid: String, algorithm: SigningAlgorithm, privateKeyPEM: String, createdAt: Date, retiredAt: Date? = nil, activatesAt: Date? = nil) {
        self.kid = kid
        self.algorithm = algorithm
        self.privateKeyPEM = privateKeyPEM
        self.createdAt = createdAt
        self.retiredAt = retiredAt
        self.activatesAt = activatesAt
    }
}

/// Token-signing keys.
public protocol SigningKeyStore: Sendable {
    func signingKeys() async throws -> [SigningKeyRecord]
    /// Adds a key unless one with the same kid exists.
    func insertSigningKey(_ key: SigningKeyRecord) async throws
    /// Marks every key that is not retired yet and signs from before `now` (its `activatesAt`, or its
    /// creation), except those in `keeping`, as retired at `now`. A key waiting to sign after `now`
    /// (another rotation's, made at the same moment) is left alone, so two rotations never leave an
    /// algorithm without a signing key, unless `includingWaiting` (a rotation that takes effect at
    /// once retires every other key, waiting ones too).
    func retireSigningKeys(keeping kids: [String], now: Date, includingWaiting: Bool) async throws
    /// Deletes keys retired before `before` (they verify no live token any more).
    func deleteSigningKeys(retiredBefore before: Date) async throws -> Int
    /// Deletes one key at once, whatever its state (a key believed compromised); false when there is none.
    func deleteSigningKey(kid: String) async throws -> Bool
    /// Replaces a key's stored private key (sealed under another key-encryption key, or in clear) if
    /// it still is `expected`; false when another node changed it first.
    func replaceSigningKeyMaterial(kid: String, expected: String, replacement: String) async throws -> Bool
}

/// Everything the broker persists. SQLite implements it for one node; PostgreSQL for several.
public protocol BrokerStore: AppStore, AccountStore, FlowStore, RefreshTokenStore, SigningKeyStore, AuditStore, PluginDataStore,
    AuthorizationCodeStore, RevocationStore, AttemptCounterStore, ProvisionalIdentityStore, DeviceStore, BrowserSessionStore,
    DeviceAuthorizationStore, EventOutboxStore, ScimStore
{
    /// Cheap round trip for `/readyz`.
    func ping() async throws
    /// Overwrites what replaced rows left behind in the database's files (old page versions, the
    /// write-ahead log), after secrets stored in clear or under an old key were re-encrypted.
    func scrubReplacedData() async throws
}

extension SigningKeyStore {
    /// Retires the keys that sign from before `now` (see `retireSigningKeys(keeping:now:includingWaiting:)`).
    public func retireSigningKeys(keeping kids: [String], now: Date) async throws {
        try await retireSigningKeys(keeping: kids, now: now, includingWaiting: false)
    }
}
