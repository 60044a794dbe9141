import Foundation
import GatehouseTesting
import Testing

@testable import TOTP

/// The one-time passwords and the QR codes of the `totp` plugin, against the RFCs' test vectors and
/// independent implementations (`oathtool`, the zxing-cpp QR reader).
@Suite("TOTP")
struct TOTPTests {
    /// RFC 4226 appendix D: the HOTP values of the secret "12345678901234567890" for counters 0 to 9.
    @Test func hotpMatchesRFC4226AppendixD() {
        let otp = OneTimePassword(secret: Array("12345678901234567890".utf8))
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        #expect((0..<10).map { otp.code(counter: UInt64($0)) } == expected)
    }

    /// RFC 6238 appendix B: 8-digit TOTP values for SHA-1, SHA-256 and SHA-512 at the six given times.
    @Test func totpMatchesRFC6238AppendixB() {
        let times: [Double] = [59, 1_111_111_109, 1_111_111_111, 1_234_567_890, 2_000_000_000, 20_000_000_000]
        let cases: [(OneTimePassword.Algorithm, String, [String])] = [
            (.sha1, "12345678901234567890", ["94287082", "07081804", "14050471", "89005924", "69279037", "65353130"]),
            (.sha256, "12345678901234567890123456789012", ["46119246", "68084774", "67062674", "91819424", "90698825", "77737706"]),
            (.sha512, "1234567890123456789012345678901234567890123456789012345678901234", ["90693936", "25091201", "99943326", "93441116", "38618901", "47863826"]),
        ]
        for (algorithm, secret, codes) in cases {
            let otp = OneTimePassword(secret: Array(secret.utf8), algorithm: algorithm, digits: 8)
            #expect(times.map { otp.code(at: Date(timeIntervalSince1970: $0)) } == codes, "\(algorithm)")
        }
    }

    /// `oathtool` (OATH Toolkit) computes the same codes from the Base32 secret an app would scan,
    /// for each algorithm, 6 and 8 digits, and a 60-second period.
    @Test func totpAgreesWithOathtool() async throws {
        let secret = (0..<20).map { UInt8(($0 * 37 + 11) & 0xff) }
        let now = Date(timeIntervalSince1970: 1_800_000_123)
        for (algorithm, digits, period) in [(OneTimePassword.Algorithm.sha1, 6, 30), (.sha256, 8, 30), (.sha512, 6, 60)] {
            let otp = OneTimePassword(secret: secret, algorithm: algorithm, digits: digits, period: period)
            let run = await ChildProcess.run([
                "oathtool", "--totp=\(algorithm.rawValue.lowercased())", "--base32", "--digits=\(digits)", "--time-step-size=\(period)s",
                "--now=@1800000123", Base32.encode(secret),
            ])
            #expect(run.status == 0, "oathtool: \(run.output)")
            #expect(run.output.trimmingCharacters(in: .whitespacesAndNewlines) == otp.code(at: now), "\(algorithm) \(digits) digits, \(period) s")
        }
    }

    /// A code matches its own step and one step either side, never two; all candidates are compared.
    @Test func aCodeMatchesWithinOneStepOfDrift() {
        let otp = OneTimePassword(secret: Array("12345678901234567890".utf8))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let step = otp.step(at: now)
        #expect(otp.matchingStep(of: otp.code(counter: step), at: now) == step)
        #expect(otp.matchingStep(of: otp.code(counter: step - 1), at: now) == step - 1)
        #expect(otp.matchingStep(of: otp.code(counter: step + 1), at: now) == step + 1)
        #expect(otp.matchingStep(of: otp.code(counter: step + 2), at: now) == nil)
        #expect(otp.matchingStep(of: otp.code(counter: step - 2), at: now) == nil)
        #expect(otp.matchingStep(of: "12345", at: now) == nil, "a code of another length never matches")
    }

    /// RFC 4648's Base32 vectors, and decoding as apps accept secrets (any case, spaces, padding).
    @Test func base32FollowsRFC4648() {
        let vectors = [("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI")]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base32.decode("mzxw 6ytb oi======") == Array("foobar".utf8))
        #expect(Base32.decode("MZXW1") == nil, "1 is not in the alphabet")
    }

    /// The key URI apps scan names issuer and account, and carries the secret and parameters.
    @Test func theKeyURINamesIssuerAccountAndParameters() throws {
        let otp = OneTimePassword(secret: Array("12345678901234567890".utf8), algorithm: .sha256, digits: 8, period: 60)
        let uri = otp.uri(issuer: "Gatehouse Bank", account: "ada@example.com")
        #expect(
            uri == "otpauth://totp/Gatehouse%20Bank:ada%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Gatehouse%20Bank&algorithm=SHA256&digits=8&period=60"
        )
    }

    /// QR codes of short and long texts (versions with and without version information and 16-bit
    /// lengths), read back by zxing-cpp from the drawn modules: the same text.
    @Test func qrCodesReadBackWithAnIndependentReader() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] ?? repository.appendingPathComponent(".build/test-venv/bin/python").path
        let reader = """
            import sys, zxingcpp
            from PIL import Image
            rows = sys.argv[1].split()
            size, scale = len(rows) + 8, 6
            image = Image.new("L", (size * scale, size * scale), 255)
            for y, row in enumerate(rows):
                for x, cell in enumerate(row):
                    if cell == "1":
                        image.paste(0, ((x + 4) * scale, (y + 4) * scale, (x + 5) * scale, (y + 5) * scale))
            found = zxingcpp.read_barcodes(image)
            sys.stdout.write(found[0].text if found else "<nothing>")
            """
        let account = "ådå+\(String(repeating: "x", count: 40))@example.com"
        let texts = [
            "otpauth://totp/A:b?secret=GEZDGNBV",
            OneTimePassword(secret: Array(repeating: 7, count: 20)).uri(issuer: "Gatehouse", account: "ada@example.com"),
            OneTimePassword(secret: Array(repeating: 9, count: 64), algorithm: .sha512).uri(issuer: "Gatehouse Bank of Somewhere", account: account),
            String(repeating: "0123456789abcdef", count: 40),
        ]
        var versions: Set<Int> = []
        for text in texts {
            let code = try #require(QRCode(text))
            versions.insert(code.version)
            let matrix = code.modules.map { row in String(row.map { $0 ? "1" : "0" }) }.joined(separator: "\n")
            let run = await ChildProcess.run([python, "-c", reader, matrix])
            #expect(run.status == 0 && run.output == text, "version \(code.version), mask \(code.mask): \(run.output)")
            #expect(code.svg().hasPrefix("<svg") && code.svg().contains("viewBox=\"0 0 \(code.size + 8) \(code.size + 8)\""))
        }
        #expect(versions.contains { $0 < 7 } && versions.contains { $0 >= 7 && $0 < 10 } && versions.contains { $0 >= 10 }, "\(versions)")
        #expect(QRCode(String(repeating: "x", count: 2332)) == nil, "beyond version 40 at level M")
    }
}
