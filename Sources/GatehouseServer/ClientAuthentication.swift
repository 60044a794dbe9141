import Foundation
import GatehouseCore
import Hummingbird

/// Reads client credentials the two ways RFC 6749 section 2.3.1 allows: HTTP Basic (with form-encoded
/// id and secret) or a `client_secret` field in the body. Presenting both is refused.
enum ClientAuthentication {
    static func credentials(from request: Request, bodySecret: String?) throws(BrokerError) -> ClientCredentials? {
        let basic = try basicCredentials(request.headers[.authorization])
        switch (basic, bodySecret) {
        case (.some, .some):
            throw BrokerError(.invalidRequest, .badRequest, "Use one client authentication method, not two.")
        case (.some(let basic), nil):
            return basic
        case (nil, .some(let secret)):
            return ClientCredentials(clientID: nil, secret: secret)
        case (nil, nil):
            return nil
        }
    }

    static func basicCredentials(_ header: String?) throws(BrokerError) -> ClientCredentials? {
        guard let header, header.lowercased().hasPrefix("basic ") else { return nil }
        let malformed = BrokerError(.invalidClient, .unauthenticated, "Malformed HTTP Basic client credentials.")
        guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":"),
            let id = String(text[..<colon]).removingPercentEncoding?.replacingOccurrences(of: "+", with: " "),
            let secret = String(text[text.index(after: colon)...]).removingPercentEncoding?.replacingOccurrences(of: "+", with: " ")
        else { throw malformed }
        return ClientCredentials(clientID: id, secret: secret)
    }
}
