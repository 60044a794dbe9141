import Foundation
import GatehousePluginKit

/// What the app's registration API may answer (HTTP 2xx, a JSON object with `result`).
enum AppAPIAnswer: Sendable {
    /// `{"result": "success", "subject": "...", "username"?: "...", "claims"?: {...}}`
    case success(subject: String, username: String?, claims: [String: JSONValue])
    /// `{"result": "challenge", "data"?: <for the client>, "state"?: <kept by Gatehouse for the next call>}`
    case challenge(data: JSONValue, state: JSONValue)
    /// `{"result": "failure", "retryable"?: bool, "error"?: "machine_code", "message": "for the person"}`
    case failure(retryable: Bool, code: String?, message: String)

    /// Parses an answer body; nil when it is not one of the three shapes (the reason says why).
    static func parse(_ body: Data) -> Result<AppAPIAnswer, Malformed> {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: body), case .object(let object) = value else {
            return .failure(Malformed(reason: "not a JSON object"))
        }
        switch object["result"]?.stringValue {
        case "success":
            guard let subject = object["subject"]?.stringValue, !subject.isEmpty, subject.count <= 255 else {
                return .failure(Malformed(reason: "success without a subject (a string of 1-255 characters)"))
            }
            var claims: [String: JSONValue] = [:]
            if let given = object["claims"] {
                guard case .object(let map) = given else { return .failure(Malformed(reason: "claims is not an object")) }
                claims = map
            }
            let username = object["username"]?.stringValue
            return .success(.success(subject: subject, username: username?.isEmpty == false ? username : nil, claims: claims))
        case "challenge":
            return .success(.challenge(data: object["data"] ?? .null, state: object["state"] ?? .null))
        case "failure":
            let message = object["message"]?.stringValue ?? "The registration was refused."
            let code = object["error"]?.stringValue.flatMap { code in
                code.count <= 64 && code.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }) ? code : nil
            }
            // A person reads the message: keep it to a sane length.
            return .success(.failure(retryable: object["retryable"] == .bool(true), code: code, message: String(message.prefix(500))))
        default:
            return .failure(Malformed(reason: "no result of success, challenge or failure"))
        }
    }

    struct Malformed: Error {
        var reason: String
    }
}
