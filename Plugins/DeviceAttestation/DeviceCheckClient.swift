import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport
import Logging

/// Apple's DeviceCheck server API, `validate_device_token`
/// (https://developer.apple.com/documentation/devicecheck/accessing-and-modifying-per-device-data):
/// a POST with the device token, a transaction id and the time in milliseconds, authorized by an
/// ES256 JWT (`kid` = the key id, `iss` = the team id, `iat`) signed with the app's DeviceCheck key.
/// Apple's answers become refusal reasons.
struct DeviceCheckClient: Sendable {
    let baseURL: String
    let teamID: String
    let keyID: String
    let http: any OutboundHTTP
    let clock: any BrokerClock
    let logger: Logger

    func validate(deviceToken: String, privateKey pem: Data) async throws {
        guard case .p256(let key)? = try? JWSSigningKey(pem: String(decoding: pem, as: UTF8.self)) else {
            throw AttestationRefusal(.serviceRefusedCredentials, "The app's DeviceCheck key is not a P-256 private key in PEM (Apple's .p8 file); set it again.")
        }
        let now = clock.now
        let body: [String: JSONValue] = [
            "device_token": .string(deviceToken), "transaction_id": .string(UUID().uuidString), "timestamp": .number((now.timeIntervalSince1970 * 1000).rounded()),
        ]
        let request = OutboundRequest(
            method: "POST", url: baseURL + "/validate_device_token",
            headers: [("Authorization", "Bearer " + (try Self.developerToken(key: key, keyID: keyID, teamID: teamID, now: now))), ("Content-Type", "application/json")],
            body: try JSONEncoder().encode(body), timeout: 10, maxResponseBytes: 64 << 10
        )
        let response: OutboundResponse
        do { response = try await http.send(request) } catch {
            logger.warning("Apple's DeviceCheck service did not answer", metadata: ["error": .string("\(error)")])
            throw BrokerError(.providerUnavailable, .unavailable, "Apple's DeviceCheck service did not answer; try again later.").publicly(because: "service_unavailable")
        }
        let text = String(decoding: response.body.prefix(512), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if response.status != 200 {
            logger.info("Apple's DeviceCheck service refused", metadata: ["status": .stringConvertible(response.status), "answer": .string(text)])
        }
        switch response.status {
        case 200: return
        case 400 where text.localizedCaseInsensitiveContains("device token"):
            throw AttestationRefusal(.invalidToken, "Apple does not accept this DeviceCheck token.")
        case 400, 401, 403:
            throw AttestationRefusal(.serviceRefusedCredentials, "Apple refused the broker's DeviceCheck credentials; an operator checks the team id, key id and key.")
        case 429:
            throw AttestationRefusal(.serviceRateLimited, "Apple's DeviceCheck service is rate limiting this app; try again later.")
        default:
            throw BrokerError(.providerUnavailable, .unavailable, "Apple's DeviceCheck service answered \(response.status); try again later.").publicly(
                because: "service_unavailable")
        }
    }

    /// The ES256 developer token Apple's server APIs take.
    static func developerToken(key: P256.Signing.PrivateKey, keyID: String, teamID: String, now: Date) throws -> String {
        try JWSSigningKey.p256(key).sign(
            ["iss": .string(teamID), "iat": .number(now.timeIntervalSince1970.rounded(.down))], header: ["kid": .string(keyID), "typ": "JWT"])
    }
}
