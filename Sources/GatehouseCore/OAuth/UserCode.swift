import Foundation

/// The code a person types at the verification page of the device grant (RFC 8628 section 6.1):
/// eight letters from twenty consonants (no vowels, so no words; no 0/O or 1/I to confuse), about
/// 34.5 bits, shown as `WDJB-MJHT`. What the person types is read case-insensitively, with any
/// dashes, spaces or other characters dropped.
public enum UserCode {
    static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
    static let length = 8

    /// A fresh code, drawn uniformly from the alphabet.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let letters = (0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] }
        return String(letters[0..<4]) + "-" + String(letters[4...])
    }

    /// What the person typed, as the code it stands for (upper case, without separators), or nil when
    /// it cannot be one.
    public static func normalized(_ typed: String) -> String? {
        let letters = typed.uppercased().filter { $0.isLetter || $0.isNumber }
        guard letters.count == length, letters.allSatisfy(alphabet.contains) else { return nil }
        return letters
    }

    /// The code as it is shown: two groups of four.
    public static func display(_ normalized: String) -> String {
        normalized.count == length ? String(normalized.prefix(4)) + "-" + String(normalized.suffix(4)) : normalized
    }

    /// The digest the store keeps and finds it by.
    public static func digest(_ normalized: String) -> String { SecretDigest.sha256Hex("user-code:" + normalized) }
}

/// What a browser sign-in at the verification page approves: the device authorization (by its
/// device code's digest) and the user code the person typed, shown on the confirmation page.
public struct DeviceVerification: Sendable, Hashable, Codable {
    public var deviceCodeDigest: String
    public var userCode: String

    public init(deviceCodeDigest: String, userCode: String) {
        self.deviceCodeDigest = deviceCodeDigest
        self.userCode = userCode
    }
}

/// The answer of the device authorization endpoint (RFC 8628 section 3.2).
public struct DeviceAuthorizationResponse: Sendable, Hashable {
    public var deviceCode: String
    public var userCode: String
    public var verificationURI: String
    public var verificationURIComplete: String
    public var expiresIn: Int
    public var interval: Int

    /// The response's JSON members.
    public var json: [String: JSONValue] {
        [
            "device_code": .string(deviceCode), "user_code": .string(userCode), "verification_uri": .string(verificationURI),
            "verification_uri_complete": .string(verificationURIComplete), "expires_in": .number(Double(expiresIn)), "interval": .number(Double(interval)),
        ]
    }
}
