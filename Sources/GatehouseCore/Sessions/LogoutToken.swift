import Foundation
import JWTKit

/// The claims of a logout token (OpenID Connect Back-Channel Logout 1.0 section 2.4): who the
/// session was for, which session (`sid`), the logout event, and no `nonce`.
public struct LogoutTokenClaims: JWTPayload, Sendable {
    public static let event = "http://schemas.openid.net/event/backchannel-logout"

    public var iss: String
    public var sub: String
    public var aud: String
    public var iat: Int
    public var exp: Int
    public var jti: String
    public var sid: String
    public var events: [String: [String: String]]

    public init(issuer: String, subject: String, audience: String, sessionID: String, issuedAt: Date, lifetime: TimeInterval = 120) {
        iss = issuer
        sub = subject
        aud = audience
        iat = Int(issuedAt.timeIntervalSince1970)
        exp = Int(issuedAt.timeIntervalSince1970 + lifetime)
        jti = RandomToken.make(byteCount: 16)
        sid = sessionID
        events = [Self.event: [:]]
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
