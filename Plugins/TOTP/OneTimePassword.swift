import Crypto
import Foundation

/// One-time passwords as authenticator apps compute them: HOTP (RFC 4226) over a counter, TOTP
/// (RFC 6238) over the time step. Written here because no library of the stack offers them; checked
/// against both RFCs' test vectors and `oathtool`.
struct OneTimePassword: Sendable, Hashable {
    /// The HMAC the code is computed with (RFC 6238 allows SHA-1, SHA-256 and SHA-512).
    enum Algorithm: String, Sendable, Hashable, CaseIterable, Codable {
        case sha1 = "SHA1", sha256 = "SHA256", sha512 = "SHA512"
    }

    /// The shared secret (at least 128 bits, RFC 4226 section 4; 160 recommended).
    var secret: [UInt8]
    var algorithm: Algorithm = .sha1
    /// 6 to 8 digits.
    var digits: Int = 6
    /// The time step in seconds (RFC 6238's X, 30 by default), counted from the Unix epoch (T0 = 0).
    var period: Int = 30

    /// The HOTP value for `counter` (RFC 4226 section 5.3: HMAC, dynamic truncation, modulo 10^digits),
    /// zero-padded to `digits`.
    func code(counter: UInt64) -> String {
        let message = withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        let key = SymmetricKey(data: secret)
        let mac: [UInt8] =
            switch algorithm {
            case .sha1: Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: key))
            case .sha256: Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
            case .sha512: Array(HMAC<SHA512>.authenticationCode(for: message, using: key))
            }
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The time step `date` falls in.
    func step(at date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970) / Double(period))
    }

    /// The TOTP value at `date`.
    func code(at date: Date) -> String { code(counter: step(at: date)) }

    /// The step whose code `given` is, among the current one and `window` steps either side (RFC 6238
    /// section 5.2 allows one step of drift); nil when none matches. Every candidate is compared in
    /// constant time, and all are compared, so the time taken says nothing about which matched.
    func matchingStep(of given: String, at date: Date, window: Int = 1) -> UInt64? {
        let now = step(at: date)
        var found: UInt64?
        for delta in -window...window {
            guard delta >= 0 || now >= UInt64(-delta) else { continue }
            let candidate = delta >= 0 ? now + UInt64(delta) : now - UInt64(-delta)
            if Self.constantTimeEquals(code(counter: candidate), given), found == nil { found = candidate }
        }
        return found
    }

    static func constantTimeEquals(_ left: String, _ right: String) -> Bool {
        let (a, b) = (Array(left.utf8), Array(right.utf8))
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The `otpauth://totp/` URI authenticator apps scan (Google Authenticator's Key URI Format):
    /// the label `issuer:account`, the Base32 secret without padding, and the parameters.
    func uri(issuer: String, account: String) -> String {
        // RFC 3986's unreserved characters, ASCII only: any other letter is percent-encoded as UTF-8.
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        let label = encode(issuer) + ":" + encode(account)
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(encode(issuer))&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(period)"
    }
}

/// RFC 4648 Base32 (the alphabet `A-Z2-7`), as authenticator apps read secrets: encoded without
/// padding; decoded case-insensitively, ignoring spaces and padding.
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Nil for a character outside the alphabet.
    static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer = 0
        var bits = 0
        for character in text.uppercased().utf8 where character != UInt8(ascii: " ") && character != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = ((buffer << 5) | value) & 0xffff
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> (bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return output
    }
}
