import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Google's `decodeIntegrityToken` (https://developer.android.com/google/play/integrity/standard#decrypt-and-verify-google-servers):
/// `POST {base}/v1/{packageName}:decodeIntegrityToken` with `{"integrity_token": ...}`, authorized
/// by the app's service account with a self-signed JWT (Google's "service account authorization
/// without OAuth": RS256, `iss` = `sub` = the account's email, `aud` = the API's address), answering
/// `{"tokenPayloadExternal": {...verdict...}}`.
struct PlayIntegrityDecoder: Sendable {
    let baseURL: String
    let http: any OutboundHTTP
    let clock: any BrokerClock

    struct ServiceAccount: Decodable {
        var client_email: String
        var private_key: String
        var private_key_id: String?
    }

    func decode(_ token: String, packageName: String, serviceAccount json: Data) async throws -> [String: JSONValue] {
        guard let account = try? JSONDecoder().decode(ServiceAccount.self, from: json),
            let key = try? JWSSigningKey(pem: account.private_key), key.algorithm == "RS256"
        else {
            throw AttestationRefusal(
                .serviceRefusedCredentials, "The app's Play service account is not a Google service-account JSON key with an RSA private key; set it again.")
        }
        let now = clock.now
        let audience = "https://playintegrity.googleapis.com/"
        var header: [String: JSONValue] = ["typ": "JWT"]
        header["kid"] = account.private_key_id.map(JSONValue.string)
        let claims: [String: JSONValue] = [
            "iss": .string(account.client_email), "sub": .string(account.client_email), "aud": .string(audience),
            "iat": .number(now.timeIntervalSince1970.rounded(.down)), "exp": .number(now.timeIntervalSince1970.rounded(.down) + 3600),
        ]
        let bearer = try key.sign(claims, header: header)
        let request = OutboundRequest(
            method: "POST", url: "\(baseURL)/v1/\(packageName):decodeIntegrityToken",
            headers: [("Authorization", "Bearer " + bearer), ("Content-Type", "application/json")],
            body: try JSONEncoder().encode(["integrity_token": token]), timeout: 10, maxResponseBytes: 256 << 10
        )
        let response: OutboundResponse
        do { response = try await http.send(request) } catch {
            throw BrokerError(.providerUnavailable, .unavailable, "Google's Play Integrity service did not answer; try again later.").publicly(
                because: "service_unavailable")
        }
        switch response.status {
        case 200:
            guard case .object(let body)? = try? JSONDecoder().decode(JSONValue.self, from: response.body), let verdict = body["tokenPayloadExternal"]?.objectValue else {
                throw AttestationRefusal(.malformed, "Google's answer has no tokenPayloadExternal.")
            }
            return verdict
        case 400: throw AttestationRefusal(.invalidToken, "Google does not accept this integrity token.")
        case 401, 403:
            throw AttestationRefusal(.serviceRefusedCredentials, "Google refused the app's Play service account (\(response.status)); check its roles and the package.")
        case 429: throw AttestationRefusal(.serviceRateLimited, "Google's Play Integrity service is rate limiting this app; try again later.")
        default:
            throw BrokerError(.providerUnavailable, .unavailable, "Google's Play Integrity service answered \(response.status); try again later.").publicly(
                because: "service_unavailable")
        }
    }
}
