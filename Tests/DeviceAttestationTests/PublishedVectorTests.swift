import Crypto
import Foundation
import GatehouseAttestation
import GatehouseCore
import Testing

@testable import DeviceAttestation

/// Every case of `Tests/Fixtures/attestation/cases.json` (published App Attest objects, Android
/// chains and Play Integrity tokens, each source and licence in that folder's README), each with the
/// verdict it must get, and each refusal for its stated reason; then the derived cases the README
/// lists, made by changing one parameter. A missing or unreadable fixture fails the test that needs
/// it, with the path, and never stops the rest of the suite.
@Suite("Published attestation vectors")
struct PublishedVectorTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/attestation")

    /// A fixture that is not where the tests expect it, or not what they expect.
    struct FixtureProblem: Error, CustomStringConvertible {
        var description: String
    }

    static func cases(_ group: String) throws -> [[String: Any]] {
        let url = folder.appendingPathComponent("cases.json")
        guard let data = FileManager.default.contents(atPath: url.path) else { throw FixtureProblem(description: "missing fixture \(url.path)") }
        guard let all = try JSONSerialization.jsonObject(with: data) as? [String: Any], let entries = all[group] as? [[String: Any]] else {
            throw FixtureProblem(description: "\(url.path) has no case list \"\(group)\"")
        }
        return entries
    }

    /// The names of a group's cases, for a parameterised test: when the fixtures cannot be read, one
    /// name that says why, so the test runs once and fails with that reason instead of crashing the suite.
    static func caseNames(_ group: String, key: String = "name") -> [String] {
        do { return try cases(group).map { ($0[key] as? String) ?? "case without \(key)" } } catch { return ["unreadable fixtures: \(error)"] }
    }

    /// The case of a group with that name (or chain path), or a failure that says which is missing.
    static func entry(_ group: String, key: String = "name", _ value: String) throws -> [String: Any] {
        guard let entry = try cases(group).first(where: { $0[key] as? String == value }) else {
            throw FixtureProblem(description: "no \(group) case with \(key) \"\(value)\" in \(folder.path)/cases.json")
        }
        return entry
    }

    static func file(_ parts: String...) throws -> Data {
        let url = parts.reduce(folder) { $0.appendingPathComponent($1) }
        guard let data = FileManager.default.contents(atPath: url.path) else { throw FixtureProblem(description: "missing fixture \(url.path)") }
        return data
    }

    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    static func base64File(_ parts: String...) throws -> [UInt8] {
        let url = parts.reduce(folder) { $0.appendingPathComponent($1) }
        guard let data = FileManager.default.contents(atPath: url.path) else { throw FixtureProblem(description: "missing fixture \(url.path)") }
        guard let bytes = Data(base64Encoded: String(decoding: data, as: UTF8.self).filter { !$0.isWhitespace }) else {
            throw FixtureProblem(description: "\(url.path) is not base64")
        }
        return Array(bytes)
    }

    static let appAttest = AppAttestVerifier(rootCertificates: try! AttestationCertificate.certificates(pem: TrustAnchors.appleAppAttestationRoot))
    static let android = AndroidKeyAttestationVerifier(trustedKeys: DeviceAttestationTrust.googleRootKeys)

    // MARK: - App Attest

    /// What a refused App Attest case must be refused for, from its name.
    static func expectedReason(appAttest name: String) -> AttestationRefusal.Reason? {
        if name.contains("nonce mismatch") || name.contains("challenge") || name.contains("payload") {
            return name.contains("payload") ? .invalidSignature : .challengeMismatch
        }
        if name.contains("expiry") { return .certificateExpired }
        if name.contains("app id") || name.contains("bundle") { return .appMismatch }
        if name.contains("production-only") { return .environmentNotAllowed }
        if name.contains("lastCounter") { return .counterInvalid }
        return nil
    }

    @Test("App Attest: every published case gets its verdict, each refusal for its reason", arguments: caseNames("apple-app-attest"))
    func appAttestCase(name: String) throws {
        let entry = try Self.entry("apple-app-attest", name)
        let object = try Self.base64File("apple-app-attest", entry["dir"] as! String, entry["file"] as! String)
        let result: Result<Int, AttestationRefusal>
        if entry["kind"] as! String == "attestation" {
            let clientDataHash: [UInt8] =
                if let hash = entry["client_data_hash_b64"] as? String { Array(Data(base64Encoded: hash)!) } else {
                    Array(SHA256.hash(data: Data(base64Encoded: entry["client_data_b64"] as! String)!))
                }
            let keyID = Array(Data(base64Encoded: entry["key_id_b64"] as! String)!)
            let appID = entry["app_id"] as! String, allowDevelopment = entry["allow_development"] as! Bool, at = Self.date(entry["verify_at"] as! String)
            result = Result { () throws(AttestationRefusal) in
                let key = try Self.appAttest.verifyAttestation(
                    object, keyID: keyID, clientDataHash: clientDataHash, appIDs: [appID], environments: .init(production: true, development: allowDevelopment), at: at
                )
                return key.keyID == keyID ? 0 : -1
            }
        } else {
            let pem = String(decoding: try Self.file("apple-app-attest", entry["dir"] as! String, entry["public_key_file"] as! String), as: UTF8.self)
            let key = try P256.Signing.PublicKey(pemRepresentation: pem)
            let clientData = Array(Data(base64Encoded: entry["client_data_b64"] as! String)!)
            let appID = entry["app_id"] as! String, lastCounter = entry["last_counter"] as! Int
            result = Result { () throws(AttestationRefusal) in
                try Self.appAttest.verifyAssertion(object, clientData: clientData, publicKey: Array(key.x963Representation), appID: appID, lastCounter: lastCounter)
            }
        }
        switch (entry["expect"] as! String, result) {
        case ("valid", .success(let counter)): #expect(counter >= 0)
        case ("invalid", .failure(let refusal)): #expect(refusal.reason == Self.expectedReason(appAttest: name), "\(name): \(refusal.message)")
        default: Issue.record("\(name): expected \(entry["expect"]!), got \(result)")
        }
    }

    @Test("App Attest: Apple's guide object is refused before its leaf's notBefore, and with another key id")
    func appAttestDerived() throws {
        let object = try Self.base64File("apple-app-attest", "apple-docs-validation-guide", "attestation.b64")
        let hash = Array("example_server_challenge".utf8)
        let keyID = Array(Data(base64Encoded: "zgSY9YSD+7TaDXssY6WlOPVS1K3Lmk+pFhlcSWE+ZV0=")!)
        let environments = AppAttestVerifier.Environments(production: true, development: false)
        #expect(throws: AttestationRefusal(.certificateExpired, "Certificate 0 of the chain is not valid at \(Self.date("2026-04-20T18:00:00Z")).")) {
            try Self.appAttest.verifyAttestation(
                object, keyID: keyID, clientDataHash: hash, appIDs: ["1234567890.com.example.myapp"], environments: environments, at: Self.date("2026-04-20T18:00:00Z"))
        }
        var otherKey = keyID
        otherKey[0] ^= 1
        #expect(throws: AttestationRefusal(.keyMismatch, "The key id is not the attested key's.")) {
            try Self.appAttest.verifyAttestation(
                object, keyID: otherKey, clientDataHash: hash, appIDs: ["1234567890.com.example.myapp"], environments: environments, at: Self.date("2026-04-21T18:13:12Z")
            )
        }
        // A production object where only development keys are accepted.
        #expect(throws: AttestationRefusal.self) {
            try Self.appAttest.verifyAttestation(
                object, keyID: keyID, clientDataHash: hash, appIDs: ["1234567890.com.example.myapp"], environments: .init(production: false, development: true),
                at: Self.date("2026-04-21T18:13:12Z")
            )
        }
        // Another root (Google's) does not anchor Apple's chain.
        let google = AppAttestVerifier(rootCertificates: try AttestationCertificate.certificates(pem: TrustAnchors.googleKeyAttestationCA1))
        #expect(throws: AttestationRefusal(.untrustedChain, "The chain does not lead to the Apple App Attestation Root CA.")) {
            try google.verifyAttestation(
                object, keyID: keyID, clientDataHash: hash, appIDs: ["1234567890.com.example.myapp"], environments: environments, at: Self.date("2026-04-21T18:13:12Z"))
        }
    }

    // MARK: - Android key attestation

    static func androidReason(_ why: String) -> Set<AttestationRefusal.Reason> {
        if why.contains("software") { return [.untrustedChain, .securityLevelTooLow] }
        return [.untrustedChain]
    }

    static func androidVerify(_ chainPath: String, challenge: [UInt8], at date: Date, trusted: [[UInt8]] = DeviceAttestationTrust.googleRootKeys)
        throws(AttestationRefusal) -> AndroidKeyAttestationVerifier.Verdict
    {
        let pem = String(decoding: (try? Self.file("android-key-attestation", chainPath)) ?? Data(), as: UTF8.self)
        let chain = (try? AttestationCertificate.certificates(pem: pem)) ?? []
        return try AndroidKeyAttestationVerifier(trustedKeys: trusted).verify(chain: chain, rules: .init(challenge: challenge), revoked: RevocationStatusList(), at: date)
    }

    @Test("Android key attestation: every published chain gets its verdict", arguments: caseNames("android-key-attestation", key: "chain"))
    func androidCase(chain: String) throws {
        let entry = try Self.entry("android-key-attestation", key: "chain", chain)
        let challenge = Array(Data(base64Encoded: entry["expected_challenge_b64"] as! String)!)
        let result = Result { () throws(AttestationRefusal) in try Self.androidVerify(chain, challenge: challenge, at: Self.date(entry["verify_at"] as! String)) }
        switch (entry["expect"] as! String, result) {
        case ("valid", .success(let verdict)):
            #expect(verdict.description.challenge == challenge)
            // Google's own decoding of the leaf, where the folder has one, agrees with ours.
            if let json = entry["json"] as? String {
                // Google's files are JSON with whole-line comments.
                let text = String(decoding: try Self.file("android-key-attestation", json), as: UTF8.self).split(separator: "\n")
                    .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
                let google = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
                let levels = ["SOFTWARE": KeyDescription.SecurityLevel.software, "TRUSTED_ENVIRONMENT": .trustedEnvironment, "STRONG_BOX": .strongBox]
                #expect(verdict.description.attestationSecurityLevel == levels[google["attestationSecurityLevel"] as! String])
                let hardware = google["hardwareEnforced"] as? [String: Any]
                if let trust = hardware?["rootOfTrust"] as? [String: Any] {
                    #expect(verdict.description.rootOfTrust?.deviceLocked == trust["deviceLocked"] as? Bool)
                }
                let software = google["softwareEnforced"] as? [String: Any]
                if let application = (software?["attestationApplicationId"] ?? hardware?["attestationApplicationId"]) as? [String: Any],
                    let packages = application["packages"] as? [[String: Any]]
                {
                    #expect(verdict.description.packages.map(\.name) == packages.map { $0["name"] as! String })
                    let signatures = (application["signatures"] as? [String] ?? []).map { Array(Data(base64Encoded: $0)!) }
                    #expect(verdict.description.signatureDigests == signatures)
                }
            }
        case ("invalid", .failure(let refusal)):
            #expect(Self.androidReason(entry["why"] as! String).contains(refusal.reason), "\(chain): \(refusal.message)")
        default: Issue.record("\(chain): expected \(entry["expect"]!), got \(result)")
        }
    }

    @Test("Android key attestation: the README's derived cases (expired RKP, unpinned root, factory past expiry, other challenges)")
    func androidDerived() throws {
        let base = "google-android-keyattestation/testdata/"
        let uuidChallenge = Array("7ccac1ea-4845-482e-858d-f6fa9aa8c295".utf8)
        #expect(throws: AttestationRefusal.self) {
            try Self.androidVerify(base + "caiman/sdk36/SB_EC_RKP.pem", challenge: uuidChallenge, at: Self.date("2025-10-04T00:00:00Z"))
        }
        let tegu = Array("6417f92c-daef-4cc1-8828-5bb39338ffd5".utf8)
        do {
            _ = try Self.androidVerify(base + "tegu/sdk36/TEE_EC_2026_ROOT.pem", challenge: tegu, at: Self.date("2026-03-09T00:00:00Z"))
            Issue.record("an expired RKP intermediate was accepted")
        } catch { #expect(error.reason == .certificateExpired) }
        let rsaOnly = try AttestationCertificate.certificates(pem: TrustAnchors.googleHardwareAttestationRoot).map(\.publicKeyInfo)
        do {
            _ = try Self.androidVerify(base + "tegu/sdk36/TEE_EC_2026_ROOT.pem", challenge: tegu, at: Self.date("2026-02-24T00:56:03Z"), trusted: rsaOnly)
            Issue.record("a chain to an unpinned key was accepted")
        } catch { #expect(error.reason == .untrustedChain) }
        // An RKP chain with its root sent twice must not pass for a factory chain (whose dates do not count).
        let akita = try AttestationCertificate.certificates(
            pem: String(decoding: try Self.file("android-key-attestation", base + "akita/sdk34/SB_RSA_NONE.pem"), as: UTF8.self))
        do {
            _ = try Self.android.verify(
                chain: akita + [akita.last!], rules: .init(challenge: Array("challenge".utf8)), revoked: .init(), at: Self.date("2030-01-01T00:00:00Z"))
            Issue.record("a chain with its root twice was accepted")
        } catch { #expect(error.reason == .untrustedChain) }
        do {
            _ = try Self.android.verify(chain: akita, rules: .init(challenge: Array("challenge".utf8)), revoked: .init(), at: Self.date("2030-01-01T00:00:00Z"))
            Issue.record("an expired RKP chain was accepted")
        } catch { #expect(error.reason == .certificateExpired) }
        let factory = try Self.androidVerify(base + "blueline/sdk28/TEE_RSA_BASE+IMEI.pem", challenge: Array("challenge".utf8), at: Self.date("2030-01-01T00:00:00Z"))
        #expect(factory.factoryProvisioned)
        for (chain, challenge, date) in [
            (base + "caiman/sdk36/SB_EC_RKP.pem", "challenge", "2025-09-26T15:30:46Z"), (base + "akita/sdk34/SB_RSA_NONE.pem", "abc", "2024-09-26T22:31:27Z"),
            ("google-android-key-attestation-legacy/algorithm_EC_SecurityLevel_TEE.chain.pem", "challenge", "2020-01-01T00:00:00Z"),
        ] {
            do {
                _ = try Self.androidVerify(chain, challenge: Array(challenge.utf8), at: Self.date(date))
                Issue.record("\(chain) passed with challenge \(challenge)")
            } catch { #expect(error.reason == .challengeMismatch) }
        }
    }

    @Test(
        "Android key attestation: a factory chain ending in its copy of Root 1 holds on both sides of that root's expiry; an RKP chain does not outlive its intermediates"
    )
    func androidChainDatesAroundRootOnesExpiry() throws {
        func chain(_ path: String) throws -> [AttestationCertificate] {
            try AttestationCertificate.certificates(pem: String(decoding: try Self.file("android-key-attestation", path), as: UTF8.self))
        }
        let factory = try chain("google-android-key-attestation-legacy/algorithm_EC_SecurityLevel_TEE.chain.pem")
        #expect(factory.last?.notAfter == Self.date("2026-05-24T16:28:52Z"))
        for day in ["2026-05-23T00:00:00Z", "2026-05-25T00:00:00Z", "2031-01-01T00:00:00Z"] {
            #expect(throws: Never.self, "\(day)") { try AndroidChainDates.check(factory, at: Self.date(day)) }
            #expect(throws: Never.self, "\(day)") {
                try CertificatePath(factory).checkLinks(trustedKeys: DeviceAttestationTrust.googleRootKeys, leafIssuerMayBeEndEntity: true)
            }
        }
        let remote = try chain("google-android-keyattestation/testdata/caiman/sdk36/SB_EC_RKP.pem")
        #expect(throws: Never.self) { try AndroidChainDates.check(remote, at: Self.date("2025-09-26T15:30:46Z")) }
        #expect(throws: CertificatePathProblem.self) { try AndroidChainDates.check(remote, at: Self.date("2030-01-01T00:00:00Z")) }
    }

    @Test("Android key attestation: the app's rules (StrongBox minimum, verified boot, package and signing certificate, revocation list)")
    func androidRules() throws {
        let base = "google-android-keyattestation/testdata/"
        let pem = String(decoding: try Self.file("android-key-attestation", base + "caiman/sdk36/SB_EC_RKP.pem"), as: UTF8.self)
        let chain = try AttestationCertificate.certificates(pem: pem)
        let at = Self.date("2025-09-26T15:30:46Z")
        let challenge = Array("7ccac1ea-4845-482e-858d-f6fa9aa8c295".utf8)
        let good = try Self.android.verify(
            chain: chain, rules: .init(challenge: challenge, minimumSecurityLevel: .strongBox, requireVerifiedBoot: true), revoked: .init(), at: at)
        #expect(good.description.attestationSecurityLevel == .strongBox)
        let package = try #require(good.description.packages.first)
        let digests = Set(good.description.signatureDigests)
        _ = try Self.android.verify(
            chain: chain, rules: .init(challenge: challenge, packageNames: [package.name], signingCertificates: digests), revoked: .init(), at: at)
        #expect(throws: AttestationRefusal(.appMismatch, "The key belongs to another app package.")) {
            try Self.android.verify(
                chain: chain, rules: .init(challenge: challenge, packageNames: ["com.example.other"], signingCertificates: digests), revoked: .init(), at: at)
        }
        #expect(throws: AttestationRefusal(.signingCertificateNotAllowed, "The app's signing certificate is not in the allow-list.")) {
            try Self.android.verify(
                chain: chain, rules: .init(challenge: challenge, packageNames: [package.name], signingCertificates: [Array(repeating: 7, count: 32)]), revoked: .init(),
                at: at)
        }
        // A TEE key where StrongBox is the minimum; an unlocked device where verified boot is required.
        let akita = try AttestationCertificate.certificates(
            pem: String(decoding: try Self.file("android-key-attestation", base + "akita/sdk34/TEE_RSA_BASE+IMEI.pem"), as: UTF8.self))
        let akitaAt = Self.date("2024-09-26T22:31:25Z")
        do {
            _ = try Self.android.verify(chain: akita, rules: .init(challenge: Array("challenge".utf8), minimumSecurityLevel: .strongBox), revoked: .init(), at: akitaAt)
            Issue.record("a TEE key passed a StrongBox minimum")
        } catch { #expect(error.reason == .securityLevelTooLow) }
        do {
            _ = try Self.android.verify(chain: akita, rules: .init(challenge: Array("challenge".utf8), requireVerifiedBoot: true), revoked: .init(), at: akitaAt)
            Issue.record("an unlocked device passed")
        } catch { #expect(error.reason == .bootStateNotAllowed) }
        // A revoked intermediate anywhere in the chain, by its serial as Google lists it.
        let serial = chain[1].serialNumber.map { String(format: "%02x", $0) }.joined()
        let list = try RevocationStatusList(json: Data(#"{"entries": {"\#(serial)": {"status": "SUSPENDED", "reason": "KEY_COMPROMISE"}}}"#.utf8))
        do {
            _ = try Self.android.verify(chain: chain, rules: .init(challenge: challenge), revoked: list, at: at)
            Issue.record("a suspended serial passed")
        } catch { #expect(error.reason == .certificateRevoked) }
    }

    // MARK: - Play Integrity

    static func key(_ entry: [String: Any], _ name: String) throws -> Data {
        if let inline = entry[name + "_b64"] as? String { return Data(inline.utf8) }
        let text = String(decoding: try Self.file("play-integrity", entry["dir"] as! String, entry[name + "_file"] as! String), as: UTF8.self)
        return Data(text.utf8)
    }

    static func verificationKey(_ text: String) throws -> P256.Signing.PublicKey {
        if text.contains("BEGIN") { return try P256.Signing.PublicKey(pemRepresentation: text) }
        return try P256.Signing.PublicKey(derRepresentation: Data(base64Encoded: text.filter { !$0.isWhitespace })!)
    }

    @Test("Play Integrity: the published token opens with its keys, and not with another AES key or verification key", arguments: caseNames("play-integrity"))
    func playIntegrityCase(name: String) throws {
        let entry = try Self.entry("play-integrity", name)
        let token = String(decoding: try Self.file("play-integrity", entry["dir"] as! String, entry["token_file"] as! String), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let decryption = try PlayIntegrityKeys.decryptionKey(String(decoding: try Self.key(entry, "decryption_key"), as: UTF8.self))
        let verification = try Self.verificationKey(String(decoding: try Self.key(entry, "verification_key"), as: UTF8.self))
        let result = Result { () throws(AttestationRefusal) in try PlayIntegrityVerifier.open(token: token, decryptionKey: decryption, verificationKey: verification) }
        switch (entry["expect"] as! String, result) {
        case ("crypto-ok", .success(let claims)):
            // The library that made it nests Google's verdict under `payload`: Google's layout is refused...
            #expect(throws: AttestationRefusal.self) { try PlayIntegrityVerifier.evaluate(claims, rules: Self.worldcoinRules, now: Self.date("2024-07-07T16:26:43Z")) }
            // ...and the nested verdict passes at its time, and not later or for another package.
            let nested = try #require(claims["payload"]?.objectValue)
            _ = try PlayIntegrityVerifier.evaluate(nested, rules: Self.worldcoinRules, now: Self.date("2024-07-07T16:26:43Z"))
            #expect(throws: AttestationRefusal.self) { try PlayIntegrityVerifier.evaluate(nested, rules: Self.worldcoinRules, now: Date()) }
            var other = Self.worldcoinRules
            other.packageNames = ["com.example.other"]
            #expect(throws: AttestationRefusal.self) { try PlayIntegrityVerifier.evaluate(nested, rules: other, now: Self.date("2024-07-07T16:26:43Z")) }
        case ("invalid", .failure(let refusal)):
            #expect(refusal.reason == (name.contains("AES") ? .invalidToken : .invalidSignature), "\(name): \(refusal.message)")
        default: Issue.record("\(name): expected \(entry["expect"]!), got \(result)")
        }
    }

    static let worldcoinRules = PlayIntegrityVerifier.Rules(
        packageNames: ["com.worldcoin.dev"], requestBinding: "aGVsbG8gd29scmQgdGhlcmU", signingCertificates: ["6a6a1474b5cbbb2b1aa57e0bc3"]
    )

    static let docsRules = PlayIntegrityVerifier.Rules(
        packageNames: ["com.package.name"], requestBinding: "aGVsbG8gd29scmQgdGhlcmU", signingCertificates: ["6a6a1474b5cbbb2b1aa57e0bc3"], requireLicensed: true
    )

    @Test("Play Integrity: Google's documented verdicts pass the app's rules at their time, and fail stale or for another package, binding or certificate")
    func playIntegrityDocumentedVerdicts() throws {
        let at = Self.date("2023-02-06T03:43:29Z")
        for file in ["verdict-standard-request.example.json", "verdict-classic-request.example.json", "decodeIntegrityToken-response.example.json"] {
            var verdict = try JSONDecoder().decode([String: JSONValue].self, from: try Self.file("play-integrity", "google-docs-example", file))
            if let wrapped = verdict["tokenPayloadExternal"]?.objectValue { verdict = wrapped }
            let facts = try PlayIntegrityVerifier.evaluate(verdict, rules: Self.docsRules, now: at)
            #expect(facts["deviceIntegrity"] == "device")
            #expect(throws: AttestationRefusal(.stale, "The verdict is older than 300 seconds (or from the future).")) {
                try PlayIntegrityVerifier.evaluate(verdict, rules: Self.docsRules, now: at.addingTimeInterval(301))
            }
            var rules = Self.docsRules
            rules.packageNames = ["com.example.other"]
            #expect(throws: AttestationRefusal(.appMismatch, "The verdict was requested by another package.")) {
                try PlayIntegrityVerifier.evaluate(verdict, rules: rules, now: at)
            }
            rules = Self.docsRules
            rules.requestBinding = "another"
            #expect(throws: AttestationRefusal(.challengeMismatch, "The verdict is not bound to this challenge.")) {
                try PlayIntegrityVerifier.evaluate(verdict, rules: rules, now: at)
            }
            rules = Self.docsRules
            rules.signingCertificates = [SigningCertificateDigest.normalize(String(repeating: "AB:", count: 31) + "AB")]
            #expect(throws: AttestationRefusal(.signingCertificateNotAllowed, "The app's signing certificate is not in the allow-list.")) {
                try PlayIntegrityVerifier.evaluate(verdict, rules: rules, now: at)
            }
            rules = Self.docsRules
            rules.deviceIntegrity = .strong
            #expect(throws: AttestationRefusal.self) { try PlayIntegrityVerifier.evaluate(verdict, rules: rules, now: at) }
        }
    }
}
