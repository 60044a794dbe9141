import Foundation

// What the SDK's values print as: never a token, password, PIN, code or secret, so that an app's
// `print(result)`, string interpolation or `dump(answer)` cannot put one in its logs.

extension Tokens: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "Tokens(\(tokenType), expiresAt: \(expiresAt), refreshToken: \(refreshToken == nil ? "none" : "•••"), account: \(accountID ?? "none"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["tokenType": tokenType, "expiresAt": expiresAt, "scope": scope as Any, "accountID": accountID as Any], displayStyle: .struct)
    }
}

extension FlowAnswer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        switch self {
        case .credentials(let username, _): "credentials(username: \(username), password: •••)"
        case .customData: "customData(•••)"
        case .pin: "pin(•••)"
        case .forgotPIN: "forgotPIN"
        case .email: "email(•••)"
        case .emailCode: "emailCode(•••)"
        case .resendCode: "resendCode"
        case .registerDeviceKey(let attestation): "registerDeviceKey(attestation: \(attestation?.format ?? "none"))"
        case .signWithDeviceKey: "signWithDeviceKey"
        case .attestation(let evidence): "attestation(\(evidence.format))"
        case .attest: "attest"
        case .activation: "activation(code: •••, pin: •••)"
        case .activationChoice(let choice, _, _, _): "activationChoice(\(choice))"
        case .confirmProfile(let changes): "confirmProfile(changes: \(changes.keys.sorted()))"
        case .profileCode: "profileCode(•••)"
        case .retry: "retry"
        case .signedJWT: "signedJWT(•••)"
        case .browserReturn: "browserReturn(•••)"
        case .fields(let fields): "fields(\(fields.keys.sorted()))"
        case .passkeyName(let name): "passkeyName(\(name))"
        case .passkey: "passkey(•••)"
        case .authenticatorCode: "authenticatorCode(•••)"
        case .useRecoveryCode: "useRecoveryCode"
        case .useAuthenticatorApp: "useAuthenticatorApp"
        case .recoveryCode: "recoveryCode(•••)"
        case .recoveryCodesSaved: "recoveryCodesSaved"
        }
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["answer": description], displayStyle: .enum) }
}

extension GatehouseConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "GatehouseConfiguration(baseURL: \(baseURL), app: \(app), clientSecret: \(clientSecret == nil ? "none" : "•••"), bindTokens: \(bindTokens))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["baseURL": baseURL, "app": app, "scopes": scopes as Any, "returnURI": returnURI as Any, "bindTokens": bindTokens, "renewalMargin": renewalMargin],
            displayStyle: .struct
        )
    }
}
