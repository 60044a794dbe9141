import Foundation

/// A picture a challenge page shows (a QR code to scan with an authenticator app). The challenge's
/// string field `field` holds it as a `data:` URL of an SVG or PNG image; the flow API hands the
/// same field to native apps. A page shows it with `<img>`, never inline: an SVG shown as an image
/// runs no script and loads nothing, so the page's Content-Security-Policy only adds `img-src data:`.
package struct ChallengeImage: Sendable, Hashable {
    /// The challenge's string field holding the `data:` URL.
    package var field: String
    /// What the picture shows, for people who cannot see it (the `alt` text).
    package var alt: String

    /// A picture from the challenge field `field`.
    package init(field: String, alt: String) {
        self.field = field
        self.alt = alt
    }

    /// The `data:` URL prefixes a page shows; anything else is left out of the page.
    package static let allowedPrefixes = ["data:image/svg+xml;base64,", "data:image/png;base64,"]

    /// The largest picture a page shows (bytes of the URL): a QR code of the largest version is
    /// about 200 kB as SVG.
    package static let maxLength = 512 * 1024

    /// Whether `url` is a picture a page may show: one of the allowed types, base64, within the size.
    package static func isUsable(_ url: String) -> Bool {
        guard url.utf8.count <= maxLength, let prefix = allowedPrefixes.first(where: { url.hasPrefix($0) }) else { return false }
        let body = url.utf8.dropFirst(prefix.utf8.count)
        return !body.isEmpty
            && body.allSatisfy { byte in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
            }
    }

    /// The `data:` URL of an SVG document.
    package static func svgDataURL(_ svg: String) -> String { allowedPrefixes[0] + Data(svg.utf8).base64EncodedString() }
}
