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
