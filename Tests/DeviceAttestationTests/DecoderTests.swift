import Crypto
import Foundation
import GatehouseAttestation
import GatehouseCore
import GatehouseTesting
import Synchronization
import Testing
import _CryptoExtras

@testable import DeviceAttestation

/// The pieces under the verifiers: the CBOR decoder's limits, the status list, signing-certificate
/// digests in every form admins write them, and Google's `decodeIntegrityToken` as a stand-in
/// speaking its documented request and answer checks the service account's JWT.
@Suite("Attestation decoders")
struct DecoderTests {
    @Test func cborDecodesWhatWebAuthnUsesAndRefusesTheRest() throws {
        // {"fmt": "none", 1: [-1, h'0102', true]}
        let map: [UInt8] = [0xa2, 0x63, 0x66, 0x6d, 0x74, 0x64, 0x6e, 0x6f, 0x6e, 0x65, 0x01, 0x83, 0x20, 0x42, 0x01, 0x02, 0xf5]
        let decoded = try CBOR.decode(map)
        #expect(decoded["fmt"]?.textValue == "none")
        #expect(decoded[1]?.arrayValue == [.negative(0), .bytes([1, 2]), .bool(true)])
        #expect(decoded[1]?.arrayValue?.first?.intValue == -1)
        // Trailing bytes, indefinite lengths, lengths past the end, repeated keys, and nesting deeper than the limit.
        #expect(throws: CBOR.Malformed.self) { try CBOR.decode(map + [0x00]) }
        #expect(throws: CBOR.Malformed.self) { try CBOR.decode([0x5f, 0x41, 0x00, 0xff]) }
        #expect(throws: CBOR.Malformed.self) { try CBOR.decode([0x5a, 0xff, 0xff, 0xff, 0xff, 0x00]) }
        #expect(throws: CBOR.Malformed.self) { try CBOR.decode([0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) }
        #expect(throws: CBOR.Malformed.self) { try CBOR.decode([0xa2, 0x01, 0x01, 0x01, 0x02]) }
        #expect(throws: CBOR.Malformed.self) { try CBOR.decode(Array(repeating: 0x81, count: 64) + [0x00]) }
        // A prefix decode says how much it read (the COSE key inside authenticator data).
        let (item, length) = try CBOR.decodePrefix([0x01, 0xff, 0xff][...])
        #expect(item == .unsigned(1) && length == 1)
    }

    @Test func hostileBytesNeverCrashTheParsers() {
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 2, 5, 37, 55, 64, 300] {
            for _ in 0..<200 {
                let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                _ = try? CBOR.decode(bytes)
                _ = try? AttestationCertificate(der: bytes)
                _ = try? KeyDescription(extensionValue: bytes)
                let authenticatorData = try? AuthenticatorData(bytes, attested: true)
                if size < 55 { #expect(authenticatorData == nil) }
                _ = AppAttestVerifier.nonce(inExtension: bytes)
            }
        }
    }

    @Test func statusListsMatchSerialsWithoutLeadingZerosInAnyCase() throws {
        let list = try RevocationStatusList(json: Data(#"{"entries": {"00C35D": {"status": "REVOKED"}, "2c8cdddfd5e03bfc": {"status": "SUSPENDED"}}}"#.utf8))
        #expect(list.status(of: [0xc3, 0x5d]) == "REVOKED")
        #expect(list.status(of: [0x00, 0x2c, 0x8c, 0xdd, 0xdf, 0xd5, 0xe0, 0x3b, 0xfc]) == "SUSPENDED")
        #expect(list.status(of: [0x01]) == nil)
        #expect(throws: (any Error).self) { try RevocationStatusList(json: Data(#"{"entries": {"01": {}}}"#.utf8)) }
    }

    @Test func theStatusListIsFetchedAgainWhenStaleAndTheLastGoodCopyOutlivesAFailedFetch() async throws {
        final class Google: OutboundHTTP {
            let answers = Mutex<[OutboundResponse]>([])
            func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
                guard let next = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw .unreachable("down") }
                return next
            }
        }
        let google = Google()
        google.answers.withLock { $0 = [OutboundResponse(status: 200, body: Data(#"{"entries": {"0a": {"status": "REVOKED"}}}"#.utf8))] }
        let clock = TestClock()
        var settings = try JSONDecoder().decode(
            DeviceAttestationPlugin.RevocationListSettings.self, from: Data(#"{"url": "https://android.googleapis.com/attestation/status"}"#.utf8))
        settings.refreshInterval = Seconds(3600)
        let source = try RevocationListSource(settings: settings, http: google, clock: clock, logger: .init(label: "test"))
        #expect(try await source.current().status(of: [0x0a]) == "REVOKED")
        clock.advance(by: 3601)
        // Google is down now: the copy fetched an hour ago still answers.
        #expect(try await source.current().status(of: [0x0a]) == "REVOKED")
        // With no copy at all, key attestation waits rather than passing unchecked.
        let empty = try RevocationListSource(settings: settings, http: Google(), clock: clock, logger: .init(label: "test"))
        let error = await thrownError { _ = try await empty.current() }
        #expect(error?.reason == "status_list_unavailable")
    }

    @Test func signingCertificateDigestsReadInEveryFormAdminsAndPlayWriteThem() {
        let bytes = (0..<32).map { UInt8($0) }
        let forms = [
            SigningCertificateDigest.display(bytes), bytes.map { String(format: "%02x", $0) }.joined(), Data(bytes).base64EncodedString(), Base64URL.encode(Data(bytes)),
        ]
        #expect(Set(forms.map(SigningCertificateDigest.normalize)).count == 1)
        #expect(SigningCertificateDigest.bytes("AB:CD") == nil)
    }

    @Test func googleDecodeIntegrityTokenIsAskedWithTheServiceAccountsSelfSignedJWT() async throws {
        let serviceKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        final class PlayStandIn: OutboundHTTP {
            let publicKey: _RSA.Signing.PublicKey
            init(publicKey: _RSA.Signing.PublicKey) { self.publicKey = publicKey }
            func send(_ request: OutboundRequest) async throws(OutboundHTTPError) -> OutboundResponse {
                guard request.url == "http://127.0.0.1:9/v1/com.example.notes:decodeIntegrityToken" else { return OutboundResponse(status: 404, body: Data()) }
                let jwt = request.headers.first { $0.name == "Authorization" }?.value.replacingOccurrences(of: "Bearer ", with: "") ?? ""
                let parts = jwt.split(separator: ".").map(String.init)
                guard parts.count == 3, let signature = Base64URL.decode(parts[2]),
                    publicKey.isValidSignature(
                        _RSA.Signing.RSASignature(rawRepresentation: signature), for: Data((parts[0] + "." + parts[1]).utf8), padding: .insecurePKCS1v1_5),
                    let claims = Base64URL.decode(parts[1]).flatMap({ try? JSONDecoder().decode(JSONValue.self, from: $0) }),
                    claims["iss"] == "verifier@notes.iam.gserviceaccount.com", claims["aud"] == "https://playintegrity.googleapis.com/"
                else { return OutboundResponse(status: 401, body: Data(#"{"error": {"code": 401, "status": "UNAUTHENTICATED"}}"#.utf8)) }
                guard let body = request.body.flatMap({ try? JSONDecoder().decode(JSONValue.self, from: $0) }), body["integrity_token"] == "good-token" else {
                    return OutboundResponse(status: 400, body: Data(#"{"error": {"code": 400, "status": "INVALID_ARGUMENT"}}"#.utf8))
                }
                return OutboundResponse(status: 200, body: Data(#"{"tokenPayloadExternal": {"requestDetails": {"requestPackageName": "com.example.notes"}}}"#.utf8))
            }
        }
        let account = try JSONEncoder().encode([
            "client_email": "verifier@notes.iam.gserviceaccount.com", "private_key": serviceKey.pemRepresentation, "private_key_id": "k1",
        ])
        let decoder = PlayIntegrityDecoder(baseURL: "http://127.0.0.1:9", http: PlayStandIn(publicKey: serviceKey.publicKey), clock: TestClock())
        let verdict = try await decoder.decode("good-token", packageName: "com.example.notes", serviceAccount: account)
        #expect(verdict["requestDetails"]?["requestPackageName"] == "com.example.notes")
        await #expect(throws: AttestationRefusal.self) { try await decoder.decode("forged", packageName: "com.example.notes", serviceAccount: account) }
        let other = try JSONEncoder().encode([
            "client_email": "verifier@notes.iam.gserviceaccount.com", "private_key": try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation,
        ])
        do {
            _ = try await decoder.decode("good-token", packageName: "com.example.notes", serviceAccount: other)
            Issue.record("a foreign service account was accepted")
        } catch let refusal as AttestationRefusal { #expect(refusal.reason == .serviceRefusedCredentials) }
    }
}
