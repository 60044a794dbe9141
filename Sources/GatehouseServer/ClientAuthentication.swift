import Foundation
import GatehouseCore
import Hummingbird

/// Reads the client credentials a request carries: the HTTP Basic header (with form-encoded id and
/// secret, RFC 6749 section 2.3.1) and the body's fields. The rules are the core's
/// (`ClientCredentials.presented`, `ClientAuthenticator`).
enum ClientAuthentication {
    /// The flow API's credentials: HTTP Basic or a `client_secret` body field; the flow names the app.
    static func credentials(from request: Request, bodySecret: String?) throws(BrokerError) -> ClientCredentials? {
        try ClientCredentials.presented(basic: try basicCredentials(request.headers[.authorization]), bodyClientID: nil, bodySecret: bodySecret)
    }

    /// A back-end call that names its app: HTTP Basic, or `client_id` (and `client_secret`) in the body,
    /// so a public app is told it may not (`unauthorized_client`) rather than that it is unknown.
    static func credentials(from request: Request, bodyClientID: String?, bodySecret: String?) throws(BrokerError) -> ClientCredentials? {
        try ClientCredentials.presented(basic: try basicCredentials(request.headers[.authorization]), bodyClientID: bodyClientID, bodySecret: bodySecret)
    }

    static func basicCredentials(_ header: String?) throws(BrokerError) -> ClientCredentials? {
        guard let header else { return nil }
        let bytes = Array(header.utf8)
        guard bytes.count > 6, String(decoding: bytes[0..<6], as: UTF8.self).lowercased() == "basic " else { return nil }
        let malformed = BrokerError(.invalidClient, .unauthenticated, "Malformed HTTP Basic client credentials.")
        let encoded = Data(bytes[6...].filter { $0 != UInt8(ascii: " ") })
        guard let data = Data(base64Encoded: encoded), let colon = data.firstIndex(of: UInt8(ascii: ":")),
            let id = FormDecoding.decode(data[data.startIndex..<colon]),
            let secret = FormDecoding.decode(data[data.index(after: colon)...])
        else { throw malformed }
        return ClientCredentials(clientID: id, secret: secret)
    }
}
