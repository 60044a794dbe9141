import Foundation
import JWTKit

/// The claims of a Gatehouse access token, following the JWT profile for OAuth 2.0 access tokens
/// (RFC 9068: header `typ` is `at+jwt`), plus `stateless`, which tells a token the broker keeps no
/// record of apart from one it does.
public struct AccessTokenClaims: JWTPayload, Sendable, Equatable {
    public var iss: IssuerClaim
    /// The account id, or for a stateless sign-in `<provider>|<subject>`.
    public var sub: SubjectClaim
    public var aud: AudienceClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var jti: IDClaim
    public var scope: String
    public var clientID: String
    public var stateless: Bool
    public var authTime: Int?
    /// Authentication methods used (RFC 8176), e.g. `pwd`, `otp`.
    public var amr: [String]?
    /// The provider instance that identified the person.
    public var idp: String?
    /// The DPoP key the token is bound to (RFC 9449 section 6.1).
    public var cnf: Confirmation?
    /// The id of the device sign-in key the person signed in with; the token dies with its device.
    public var deviceKey: String?
    /// The refresh-token family issued with this token: logging out (or revoking the refresh token)
    /// revokes the family and with it this token.
    public var fid: String?
    /// The digest of the installation the sign-in named (`RegistrationState.installationDigest`), so
    /// that a reinstalled app cannot pass the old installation's tokens off as its own.
    public var ins: String?
    /// The party acting for the subject, for a token made by a token exchange with an actor token
    /// (RFC 8693 section 4.1): `sub` and `client_id` of the actor, and the earlier actors nested.
    public var act: JSONValue?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, jti, scope, stateless, amr, idp, cnf, fid, ins, act
        case deviceKey = "device_key"
        case clientID = "client_id"
        case authTime = "auth_time"
    }

    public init(
        issuer: String, subject: String, audience: String, issuedAt: Date, expiresAt: Date, scope: String, stateless: Bool, authTime: Date?, amr: [String]?,
        identityProvider: String?, id: String? = nil, dpopJKT: String? = nil, deviceKey: String? = nil, family: String? = nil, installation: String? = nil
    ) {
        self.fid = family
        self.ins = installation
        self.cnf = dpopJKT.map(Confirmation.init(jkt:))
        self.deviceKey = deviceKey
        self.iss = IssuerClaim(value: issuer)
        self.sub = SubjectClaim(value: subject)
        self.aud = AudienceClaim(value: audience)
        let issued = Date(timeIntervalSince1970: issuedAt.timeIntervalSince1970.rounded(.down))
        self.iat = IssuedAtClaim(value: issued)
        self.exp = ExpirationClaim(value: Date(timeIntervalSince1970: expiresAt.timeIntervalSince1970.rounded(.down)))
        self.jti = IDClaim(value: id ?? RandomToken.make(byteCount: 16))
        self.scope = scope
        self.clientID = audience
        self.stateless = stateless
        self.authTime = authTime.map { Int($0.timeIntervalSince1970) }
        self.amr = amr
        self.idp = identityProvider
    }

    /// Expiry is checked by `SigningKeyring.verify` against the broker's clock, so tests can move time.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
