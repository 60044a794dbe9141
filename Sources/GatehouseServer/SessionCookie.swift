import Foundation
import GatehouseCore
import Hummingbird

/// The single sign-on session's cookie: `__Host-gatehouse_session` (`Secure`, `Path=/`, no `Domain`)
/// when the issuer is `https`; on a plain-`http` loopback issuer (development) browsers refuse
/// `__Host-` and `Secure` cookies, so it is `gatehouse_session` without `Secure`. Always `HttpOnly`
/// and `SameSite=Lax`, and without `Max-Age`: it goes when the browser closes, or when the session ends.
///
/// The admin console's cookies (`gatehouse_console`, `gatehouse_console_sign_in`, `gatehouse_console_draft`)
/// follow the same rules.
struct SessionCookie {
    let secure: Bool
    let baseName: String

    init(issuer: String, baseName: String = "gatehouse_session") {
        secure = issuer.hasPrefix("https:")
        self.baseName = baseName
    }

    var name: String { secure ? "__Host-" + baseName : baseName }

    /// The cookie value the request carries, if it looks like one of ours.
    func value(in request: Request) -> String? {
        request.cookies[name]?.value.nilIfInvalidToken
    }

    /// A cookie whose value is a sealed record (not a random token): taken as it is, up to 2 KB, for
    /// the core to open (anything altered or foreign does not open).
    func sealedValue(in request: Request, maxBytes: Int = 2048) -> String? {
        guard let value = request.cookies[name]?.value, value.utf8.count <= maxBytes, value.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        return value
    }

    func set(_ value: String, on response: inout Response) {
        response.setCookie(Cookie(name: name, value: value, path: "/", secure: secure, httpOnly: true, sameSite: .lax))
    }

    func clear(on response: inout Response) {
        response.setCookie(
            Cookie(name: name, value: "", expires: Date(timeIntervalSince1970: 0), maxAge: 0, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
        )
    }

    /// The CSRF token of the logout confirmation form: derived from the cookie, which a page of
    /// another site can neither read nor send with a cross-site POST (`SameSite=Lax`).
    static func logoutToken(for cookie: String) -> String {
        SecretDigest.sha256Hex("gatehouse-logout:" + cookie)
    }
}
