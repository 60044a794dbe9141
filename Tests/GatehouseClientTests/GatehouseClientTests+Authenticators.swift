import Crypto
import Foundation
import GatehouseClient
import GatehouseCore
import GatehouseTesting
import Testing

/// Passkeys and authenticator apps through the SDK, as a native app uses them: the options the
/// platform's passkey API takes, the credential it answers (an Android app's origin), and an
/// authenticator app set up from the URI the broker shows.
extension GatehouseClientTests {
    /// The SDK's JSON as the test authenticator's, and back (both are plain JSON).
    static func core(_ json: JSON) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(json)) }
    static func sdk(_ value: JSONValue) throws -> JSON { try JSONDecoder().decode(JSON.self, from: JSONEncoder().encode(value)) }

    @Test func aNativeAppMakesAPasskeyAndSignsInWithItWithoutAUsername() async throws {
        let client = world.client("passkeyphone")
        let phone = SoftAuthenticator()
        let name = "pia-\(UUID().uuidString.prefix(8).lowercased())"
        let seen = OptionsBox()
        let delegate = ScriptedDelegate { challenge, _ in
            switch challenge {
            case .passkeyName: return .passkeyName(name)
            case .createPasskey(let options, _):
                seen.created = options
                return .passkey(.json(try Self.sdk(phone.create(try Self.core(options.json), origin: SDKWorld.androidOrigin))))
            case .usePasskey(let options, _):
                seen.used = options
                return .passkey(.json(try Self.sdk(try #require(phone.get(try Self.core(options.json), origin: SDKWorld.androidOrigin)))))
            default: throw GatehouseError.refused(code: "unexpected", description: "\(challenge.type)", status: 0, reason: nil)
            }
        }
        guard case .completed(let registered) = try await client.register(provider: "passkeys", delegate: delegate) else { Issue.record("no registration"); return }
        let account = try #require(registered.account)
        #expect(account.username == name)
        let created = try #require(seen.created)
        #expect(created.relyingPartyID == "sdk.example.test" && created.challenge.count == 32 && created.userID?.count == 32 && created.userName == name)

        try await client.logout()
        guard case .completed(let signedIn) = try await client.signIn(provider: "passkeys", delegate: delegate) else { Issue.record("no sign-in"); return }
        #expect(signedIn.account?.id == account.id)
        #expect(seen.used?.credentialIDs.isEmpty == true, "no username, no credential list: any passkey of the relying party")
        #expect(seen.used?.relyingPartyID == "sdk.example.test")
        // The SDK never prints a credential.
        #expect(FlowAnswer.passkey(.json(["id": "x"])).description == "passkey(•••)")
    }

    @Test func anAuthenticatorAppIsSetUpFromItsURIAndAskedAtTheNextSignIn() async throws {
        let client = world.client("authapp")
        let username = "otp-\(UUID().uuidString.prefix(8).lowercased())"
        let secretBox = OptionsBox()
        let delegate = ScriptedDelegate { challenge, _ in
            switch challenge {
            case .credentials: return .credentials(username: username, password: "a long and fine password")
            case .authenticatorAppSetup(let uri, let secret, _):
                #expect(uri?.scheme == "otpauth" && uri?.host == "totp")
                secretBox.secret = secret
                return .authenticatorCode(Self.totp(secret, at: Date()))
            case .recoveryCodes(let codes, _):
                secretBox.recovery = codes
                return .recoveryCodesSaved
            case .authenticatorCode(let digits, _):
                #expect(digits == 6)
                // The next step's code: the setup used this one.
                return .authenticatorCode(Self.totp(secretBox.secret ?? "", at: Date().addingTimeInterval(30)))
            default: throw GatehouseError.refused(code: "unexpected", description: "\(challenge.type)", status: 0, reason: nil)
            }
        }
        guard case .completed = try await client.register(provider: "local", delegate: delegate) else { Issue.record("no registration"); return }
        #expect(secretBox.recovery?.count == 10)
        try await client.logout()
        guard case .completed = try await client.signIn(provider: "local", delegate: delegate) else { Issue.record("no sign-in"); return }
    }

    /// RFC 6238 with SHA-1, 6 digits, 30 seconds, from a Base32 secret (spaces allowed).
    static func totp(_ base32: String, at date: Date) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, buffer = 0
        var key: [UInt8] = []
        for character in base32.uppercased() where character != " " {
            guard let value = alphabet.firstIndex(of: character) else { continue }
            buffer = (buffer << 5 | value) & 0xffff
            bits += 5
            if bits >= 8 {
                key.append(UInt8(buffer >> (bits - 8) & 0xff))
                bits -= 8
            }
        }
        let counter = UInt64(date.timeIntervalSince1970 / 30).bigEndian
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: withUnsafeBytes(of: counter) { Array($0) }, using: SymmetricKey(data: key)))
        let offset = Int(mac[19] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])) % 1_000_000
        return String(format: "%06u", value)
    }
}

/// What a scripted delegate saw, for the test to check afterwards.
final class OptionsBox: @unchecked Sendable {
    var created: PasskeyOptions?
    var used: PasskeyOptions?
    var secret: String?
    var recovery: [String]?
}
