import Foundation

/// An email address as the broker accepts it: `local@domain`, printable ASCII (or UTF-8 letters) with
/// no spaces, angle brackets, quotes or line breaks, so that it can go into an SMTP command and a
/// header as it is. Compared and stored lower-cased: people do not expect `Alice@Example.com` and
/// `alice@example.com` to be two people.
public struct EmailAddress: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The address as given, trimmed.
    public let value: String

    /// An address, or nil when `text` is not one.
    public init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, parts[1].contains("."),
            parts.allSatisfy(Self.isDotted),
            // Control characters, spaces and what would end an SMTP path or a header's address.
            trimmed.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !"<>()[]\\,;:\"".unicodeScalars.contains($0) })
        else { return nil }
        self.value = trimmed
    }

    /// Dots only between characters: not first, not last, never two in a row.
    private static func isDotted(_ part: Substring) -> Bool {
        !part.hasPrefix(".") && !part.hasSuffix(".") && !part.contains("..")
    }

    /// Reads an address, refusing one that is not.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let address = EmailAddress(text) else { throw ConfigIssue(path: decoder.codingPath, "not an email address: '\(text)'") }
        self = address
    }

    /// Writes the address.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    /// The address.
    public var description: String { value }

    /// The address with most of the local part hidden (`a•••e@example.com`), for challenges and pages
    /// that confirm where a code went without handing the address to whoever holds the flow.
    public var masked: String {
        let parts = value.split(separator: "@", maxSplits: 1)
        let local = parts[0]
        let shown = local.count <= 2 ? String(local.prefix(1)) + "•••" : "\(local.first!)•••\(local.last!)"
        return "\(shown)@\(parts[1])"
    }
}

extension IdentityLink {
    /// The address this identity's provider vouches for.
    public var verifiedEmail: EmailAddress? { claims.verifiedEmail }

    /// The provider id under which an authenticator links an address an account enrolled with it.
    /// `#` is not allowed in provider ids, so no provider can sign in with such a link.
    public static func enrolledAddressProvider(_ authenticatorID: String) -> String { "\(authenticatorID)#address" }
}
