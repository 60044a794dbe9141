import Foundation

/// How an app's sign-in pages look to its people: the name they read, its logo, the colour of its
/// buttons and links, and where to get help or read the privacy notice. Everything is optional; an
/// app without branding gets Gatehouse's own look. The pages' Content-Security-Policy stays strict: a
/// logo is an https image (its origin alone is allowed as an image source on the app's pages) or a
/// small `data:` image, and the colour only reaches a stylesheet as a checked hex value.
public struct BrandingPolicy: Sendable, Hashable, Codable {
    /// The name the pages show ("to continue to …"); nil: the app's name.
    public var displayName: String?
    /// An https image URL (http on a loopback host), or a `data:image/…;base64,` image of at most
    /// `maxLogoBytes`.
    public var logo: String?
    /// `#rgb` or `#rrggbb`, dark enough for white text on it (WCAG contrast 4.5:1).
    public var primaryColor: String?
    /// Where people get help, and the privacy notice: https URLs shown under every page.
    public var supportURL: String?
    public var privacyURL: String?
    /// The language the app's pages, flow texts and emails use when neither the app's `ui_locales`
    /// nor the person's `Accept-Language` names one the broker speaks (`TextTranslations.languages`);
    /// nil: English.
    public var defaultLanguage: String?

    /// The largest `data:` logo, in characters: 64 KiB keeps policies small and pages quick.
    public static let maxLogoBytes = 65_536

    public init(
        displayName: String? = nil, logo: String? = nil, primaryColor: String? = nil, supportURL: String? = nil, privacyURL: String? = nil,
        defaultLanguage: String? = nil
    ) {
        self.defaultLanguage = defaultLanguage
        self.displayName = displayName
        self.logo = logo
        self.primaryColor = primaryColor
        self.supportURL = supportURL
        self.privacyURL = privacyURL
    }

    enum CodingKeys: String, CodingKey { case displayName, logo, primaryColor, supportURL, privacyURL, defaultLanguage }

    /// Reads the branding, refusing what a page could not show safely, with the exact path. An empty
    /// value is no value (how the console clears one).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys) throws -> String? {
            let value = try container.decodeIfPresent(String.self, forKey: key)?.trimmingCharacters(in: .whitespacesAndNewlines)
            return value?.isEmpty == true ? nil : value
        }
        displayName = try text(.displayName)
        logo = try text(.logo)
        primaryColor = try text(.primaryColor)
        supportURL = try text(.supportURL)
        privacyURL = try text(.privacyURL)
        defaultLanguage = try text(.defaultLanguage)
        let path = decoder.codingPath
        if let defaultLanguage, !TextTranslations.languages.contains(defaultLanguage) {
            throw ConfigIssue(
                path: path + [CodingKeys.defaultLanguage], "must be one of \(TextTranslations.languages.joined(separator: ", ")), got '\(defaultLanguage)'")
        }
        if let displayName, displayName.count > 100 {
            throw ConfigIssue(path: path + [CodingKeys.displayName], "must be at most 100 characters, got \(displayName.count)")
        }
        if let logo, !Self.isUsableLogo(logo) {
            throw ConfigIssue(
                path: path + [CodingKeys.logo],
                "must be an https image URL (http only on a loopback host) or a data:image/png, jpeg, gif, webp or svg+xml base64 URL of at most \(Self.maxLogoBytes) characters"
            )
        }
        if let primaryColor {
            guard let rgb = Self.rgb(primaryColor) else {
                throw ConfigIssue(path: path + [CodingKeys.primaryColor], "must be a hex colour such as #0b5cad, got '\(primaryColor)'")
            }
            let contrast = Self.contrastWithWhite(rgb)
            guard contrast >= 4.5 else {
                throw ConfigIssue(
                    path: path + [CodingKeys.primaryColor],
                    "is too light for white text on it: contrast \(String(format: "%.1f", contrast)):1, needs 4.5:1 (WCAG AA); choose a darker colour")
            }
        }
        for key in [CodingKeys.supportURL, .privacyURL] {
            if let url = key == .supportURL ? supportURL : privacyURL, !(LoopbackHost.allowsWebURL(url) || url.hasPrefix("mailto:")) {
                throw ConfigIssue(path: path + [key], "must be an https URL (http only on a loopback host) or a mailto: address")
            }
        }
    }

    /// The origin a URL logo is fetched from, for the page's `img-src`; nil for a `data:` logo.
    public var logoOrigin: String? {
        guard let logo, !logo.hasPrefix("data:"), let components = URLComponents(string: logo), let scheme = components.scheme, let host = components.host
        else { return nil }
        return "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")"
    }

    static func isUsableLogo(_ logo: String) -> Bool {
        if logo.hasPrefix("data:") {
            let types = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"]
            guard logo.count <= maxLogoBytes, let comma = logo.firstIndex(of: ",") else { return false }
            let header = logo[logo.index(logo.startIndex, offsetBy: 5)..<comma]
            let payload = logo[logo.index(after: comma)...]
            return types.contains { header == "\($0);base64" } && payload.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+/=".contains($0)) }
        }
        // No quotes, spaces or parentheses: the URL goes into an attribute and a CSP source list.
        return LoopbackHost.allowsWebURL(logo) && URLComponents(string: logo)?.host != nil
            && !logo.contains { $0.isWhitespace || "\"'()<>;,".contains($0) }
    }

    /// `#rgb` or `#rrggbb` as three 0-255 values.
    static func rgb(_ text: String) -> (Double, Double, Double)? {
        guard text.hasPrefix("#") else { return nil }
        var hex = String(text.dropFirst())
        if hex.count == 3 { hex = hex.map { "\($0)\($0)" }.joined() }
        guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
        return (Double((value >> 16) & 0xFF), Double((value >> 8) & 0xFF), Double(value & 0xFF))
    }

    /// The WCAG 2 contrast ratio of white against the colour.
    static func contrastWithWhite(_ rgb: (Double, Double, Double)) -> Double {
        func channel(_ value: Double) -> Double {
            let c = value / 255
            return c <= 0.03928 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        let luminance = 0.2126 * channel(rgb.0) + 0.7152 * channel(rgb.1) + 0.0722 * channel(rgb.2)
        return 1.05 / (luminance + 0.05)
    }
}
