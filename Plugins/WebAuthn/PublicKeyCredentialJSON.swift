import Foundation
import GatehousePluginKit

/// The credential a browser (`PublicKeyCredential.toJSON()`, §5.1.8) or a native passkey API answers,
/// as JSON with base64url members: `RegistrationResponseJSON` or `AuthenticationResponseJSON`.
struct PublicKeyCredentialJSON: Sendable {
    let id: String
    let rawID: [UInt8]
    let clientDataJSON: [UInt8]
    let attestationObject: [UInt8]?
    let transports: [String]
    let authenticatorData: [UInt8]?
    let signature: [UInt8]?
    let userHandle: [UInt8]?

    init(_ value: JSONValue) throws(WebAuthnRefusal) {
        guard case .object(let object) = value, let response = object["response"]?.objectValue else {
            throw WebAuthnRefusal(.malformed, "The credential is not a PublicKeyCredential JSON object with a response.")
        }
        guard object["type"]?.stringValue == "public-key" else { throw WebAuthnRefusal(.malformed, "The credential's type is not public-key.") }
        func bytes(_ text: JSONValue?) throws(WebAuthnRefusal) -> [UInt8]? {
            guard let text else { return nil }
            guard let string = text.stringValue, let data = Base64URL.decode(string.replacingOccurrences(of: "=", with: "")) else {
                throw WebAuthnRefusal(.malformed, "A credential member is not base64url.")
            }
            return Array(data)
        }
        guard let rawID = try bytes(object["rawId"] ?? object["id"]), !rawID.isEmpty, rawID.count <= AuthenticatorData.maxCredentialIDLength,
            let clientData = try bytes(response["clientDataJSON"])
        else { throw WebAuthnRefusal(.malformed, "The credential lacks rawId or clientDataJSON.") }
        if let id = object["id"]?.stringValue, Base64URL.decode(id.replacingOccurrences(of: "=", with: "")).map(Array.init) != rawID {
            throw WebAuthnRefusal(.malformed, "The credential's id and rawId differ.")
        }
        self.rawID = rawID
        self.id = Base64URL.encode(bytes: rawID)
        clientDataJSON = clientData
        attestationObject = try bytes(response["attestationObject"])
        transports =
            response["transports"]?.arrayValue?.compactMap(\.stringValue).filter { ["usb", "nfc", "ble", "internal", "hybrid", "smart-card"].contains($0) } ?? []
        authenticatorData = try bytes(response["authenticatorData"])
        signature = try bytes(response["signature"])
        let handle = try bytes(response["userHandle"])
        userHandle = handle?.isEmpty == true ? nil : handle
    }
}
