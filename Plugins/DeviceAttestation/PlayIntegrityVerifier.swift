import Crypto
import Foundation
import GatehousePluginKit
import GatehouseSupport

/// Google Play Integrity (https://developer.android.com/google/play/integrity/verdicts): an integrity
/// token is a JWE (`A256KW` + `A256GCM`) around a JWS (`ES256`) whose payload is the verdict. This
/// type opens tokens locally with the app's decryption and verification keys (no JOSE library for JWE
/// resolves here, so the two layers are written out, for exactly these algorithms), and judges a
/// verdict — whether it came from here or from Google's `decodeIntegrityToken` — against the app's rules.
enum PlayIntegrityVerifier {
    /// Decrypts the JWE and verifies the JWS inside; answers the verdict JSON.
    static func open(token: String, decryptionKey: SymmetricKey, verificationKey: P256.Signing.PublicKey) throws(AttestationRefusal) -> [String: JSONValue] {
        let jws = try decrypt(token: token, key: decryptionKey)
        return try verify(jws: jws, key: verificationKey)
    }

    static func decrypt(token: String, key: SymmetricKey) throws(AttestationRefusal) -> String {
        guard token.utf8.count <= 65_536 else { throw AttestationRefusal(.malformed, "The integrity token is too long.") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, let headerData = Base64URL.decode(parts[0]), let wrappedKey = Base64URL.decode(parts[1]), let iv = Base64URL.decode(parts[2]),
            let ciphertext = Base64URL.decode(parts[3]), let tag = Base64URL.decode(parts[4]),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerData)
        else { throw AttestationRefusal(.malformed, "The integrity token is not a compact JWE.") }
        guard header["alg"]?.stringValue == "A256KW", header["enc"]?.stringValue == "A256GCM", header["zip"] == nil else {
            throw AttestationRefusal(.malformed, "The integrity token must be A256KW + A256GCM.")
        }
        do {
            let contentKey = try AES.KeyWrap.unwrap(wrappedKey, using: key)
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
            let plaintext = try AES.GCM.open(box, using: contentKey, authenticating: Data(parts[0].utf8))
            return String(decoding: plaintext, as: UTF8.self)
        } catch {
            throw AttestationRefusal(.invalidToken, "The integrity token does not decrypt with this app's decryption key.")
        }
    }

    static func verify(jws text: String, key: P256.Signing.PublicKey) throws(AttestationRefusal) -> [String: JSONValue] {
        guard let jws = CompactJWS(text, maxBytes: 65_536) else { throw AttestationRefusal(.malformed, "The decrypted token is not a compact JWS.") }
        guard jws.algorithm == "ES256" else { throw AttestationRefusal(.invalidSignature, "The verdict must be signed with ES256.") }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature), key.isValidSignature(signature, for: jws.signingInput) else {
            throw AttestationRefusal(.invalidSignature, "The verdict's signature does not verify with this app's verification key.")
        }
        return jws.claims
    }

    /// An app's thresholds.
    struct Rules: Sendable, Hashable {
        /// Package names the app ships as.
        var packageNames: Set<String>
        /// What `requestHash` (standard requests) or `nonce` (classic requests) must be.
        var requestBinding: String
        /// The app's signing-certificate digests, normalized (`SigningCertificateDigest`).
        var signingCertificates: Set<String>
        var requirePlayRecognized = true
        var deviceIntegrity: DeviceIntegrity = .device
        var requireLicensed = false
        var maxAge: TimeInterval = 300
        var clockSkew: TimeInterval = 30
    }

    /// Device verdict labels, weakest first.
    enum DeviceIntegrity: String, Sendable, Hashable, Comparable, CaseIterable {
        case none, basic, device, strong

        var label: String? {
            switch self {
            case .none: nil
            case .basic: "MEETS_BASIC_INTEGRITY"
            case .device: "MEETS_DEVICE_INTEGRITY"
            case .strong: "MEETS_STRONG_INTEGRITY"
            }
        }

        static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
    }

    /// Judges a verdict payload (Google's layout: `requestDetails`, `appIntegrity`, ... at the top).
    /// Answers the facts worth keeping.
    static func evaluate(_ verdict: [String: JSONValue], rules: Rules, now: Date) throws(AttestationRefusal) -> [String: String] {
        guard case .object(let request)? = verdict["requestDetails"], case .object(let app)? = verdict["appIntegrity"] else {
            throw AttestationRefusal(.malformed, "The verdict has no requestDetails or appIntegrity.")
        }
        guard let requestPackage = request["requestPackageName"]?.stringValue, rules.packageNames.contains(requestPackage) else {
            throw AttestationRefusal(.appMismatch, "The verdict was requested by another package.")
        }
        guard let sent = (request["requestHash"] ?? request["nonce"])?.stringValue, SecretDigest.constantTimeEquals(sent, rules.requestBinding) else {
            throw AttestationRefusal(.challengeMismatch, "The verdict is not bound to this challenge.")
        }
        guard let millis = Self.number(request["timestampMillis"]) else { throw AttestationRefusal(.malformed, "The verdict has no timestampMillis.") }
        let issuedAt = Date(timeIntervalSince1970: millis / 1000)
        guard issuedAt <= now.addingTimeInterval(rules.clockSkew), now.timeIntervalSince(issuedAt) <= rules.maxAge else {
            throw AttestationRefusal(.stale, "The verdict is older than \(Int(rules.maxAge)) seconds (or from the future).")
        }
        let recognition = app["appRecognitionVerdict"]?.stringValue ?? "UNEVALUATED"
        if rules.requirePlayRecognized {
            guard recognition == "PLAY_RECOGNIZED" else {
                throw AttestationRefusal(.appNotRecognized, "Google Play does not recognise this app binary (\(recognition)).")
            }
        }
        // Whatever the recognition verdict, a package or certificate the verdict names must be the app's
        // (a re-signed copy is UNRECOGNIZED_VERSION with a foreign certificate); only an unevaluated app names none.
        if recognition != "UNEVALUATED" || rules.requirePlayRecognized {
            guard let package = app["packageName"]?.stringValue, rules.packageNames.contains(package) else {
                throw AttestationRefusal(.appMismatch, "The verdict is for another package.")
            }
            let digests = app["certificateSha256Digest"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard digests.contains(where: { rules.signingCertificates.contains(SigningCertificateDigest.normalize($0)) }) else {
                throw AttestationRefusal(.signingCertificateNotAllowed, "The app's signing certificate is not in the allow-list.")
            }
        }
        let labels = Set((verdict["deviceIntegrity"]?.objectValue?["deviceRecognitionVerdict"]?.arrayValue ?? []).compactMap(\.stringValue))
        let met = DeviceIntegrity.allCases.last { $0.label.map(labels.contains) ?? true } ?? DeviceIntegrity.none
        guard met >= rules.deviceIntegrity else {
            throw AttestationRefusal(.deviceIntegrityTooLow, "The device verdict is below this app's threshold (\(rules.deviceIntegrity.rawValue)).")
        }
        let licence = verdict["accountDetails"]?.objectValue?["appLicensingVerdict"]?.stringValue ?? "UNEVALUATED"
        if rules.requireLicensed, licence != "LICENSED" { throw AttestationRefusal(.notLicensed, "The Play account is not licensed for this app (\(licence)).") }
        var facts = ["package": requestPackage, "appRecognition": recognition, "deviceIntegrity": met.rawValue, "licensing": licence]
        if let version = app["versionCode"].flatMap(Self.number), version.isFinite, abs(version) < 1e15 { facts["versionCode"] = String(Int(version)) }
        return facts
    }

    /// Numbers arrive as JSON numbers or (in Google's own examples) as strings.
    static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .number(let number)?: number
        case .string(let text)?: Double(text)
        default: nil
        }
    }
}

/// Signing-certificate SHA-256 digests as admins write them (`AB:CD:...` as keytool and the Play
/// Console show them, plain hex, or base64 / base64url as Play Integrity reports them), reduced to
/// one comparable form: lowercase hex when the text is 32 bytes in any of those encodings.
enum SigningCertificateDigest {
    static func bytes(_ text: String) -> [UInt8]? {
        let hex = text.replacingOccurrences(of: ":", with: "").lowercased()
        if hex.count == 64, hex.allSatisfy(\.isHexDigit) {
            return stride(from: 0, to: 64, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
        }
        if let data = Base64URL.decode(text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")),
            data.count == 32
        {
            return Array(data)
        }
        return nil
    }

    static func normalize(_ text: String) -> String {
        bytes(text).map(SecretDigest.hex) ?? text
    }

    /// `AB:CD:...`, the form people compare with the Play Console.
    static func display(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined(separator: ":") }
}
