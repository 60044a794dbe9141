/// What an app accepts as a new password or PIN (NIST SP 800-63B section 5.1.1.2): a minimum and
/// maximum length, no deny-listed values, no runs of sequential or repeated characters, not the
/// username. PINs are passwords with `numericOnly` set.
public struct PasswordPolicy: Sendable, Hashable, Codable {
    /// The fewest characters a password may have.
    public var minLength: Int
    /// Bcrypt reads only 72 bytes; longer secrets would be silently truncated, so they are refused.
    public var maxLength: Int
    /// A PIN: digits only.
    public var numericOnly: Bool
    /// Refuse a run of this many (or more) sequential characters such as `1234`, `abcd` or `4321`; 0 turns it off.
    public var maxSequence: Int
    /// Refuse this many (or more) identical characters in a row such as `aaa`; 0 turns it off.
    public var maxRepeated: Int
    /// Extra refused values on top of the built-in list of common passwords (compared case-insensitively).
    public var denyList: [String]

    /// A policy; every parameter has the NIST-minded default.
    public init(
        minLength: Int = 8, maxLength: Int = 72, numericOnly: Bool = false, maxSequence: Int = 4,
        maxRepeated: Int = 3, denyList: [String] = []
    ) {
        self.minLength = minLength
        self.maxLength = maxLength
        self.numericOnly = numericOnly
        self.maxSequence = maxSequence
        self.maxRepeated = maxRepeated
        self.denyList = denyList
    }

    enum CodingKeys: String, CodingKey {
        case minLength, maxLength, numericOnly, maxSequence, maxRepeated, denyList
    }

    /// Reads a policy with defaults, refusing impossible values with their path.
    public init(from decoder: any Decoder) throws {
        let defaults = PasswordPolicy()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.minLength = try container.decodeIfPresent(Int.self, forKey: .minLength) ?? defaults.minLength
        self.maxLength = try container.decodeIfPresent(Int.self, forKey: .maxLength) ?? defaults.maxLength
        self.numericOnly = try container.decodeIfPresent(Bool.self, forKey: .numericOnly) ?? defaults.numericOnly
        self.maxSequence = try container.decodeIfPresent(Int.self, forKey: .maxSequence) ?? defaults.maxSequence
        self.maxRepeated = try container.decodeIfPresent(Int.self, forKey: .maxRepeated) ?? defaults.maxRepeated
        self.denyList = try container.decodeIfPresent([String].self, forKey: .denyList) ?? defaults.denyList
        if minLength < 4 {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.minLength], "must be at least 4")
        }
        if maxLength < minLength || maxLength > 72 {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.maxLength], "must be between minLength (\(minLength)) and 72")
        }
        if maxSequence < 0 || maxSequence == 1 || maxSequence == 2 {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.maxSequence], "must be 0 (off) or at least 3")
        }
        if maxRepeated < 0 || maxRepeated == 1 {
            throw ConfigIssue(path: decoder.codingPath + [CodingKeys.maxRepeated], "must be 0 (off) or at least 2")
        }
    }

    /// The rules `check` applies, in words, for a page to show before anyone breaks one.
    public var rules: [String] { rules(in: "en") }

    /// The rules in `language` (`TextTranslations.languages`).
    public func rules(in language: String) -> [String] {
        let texts = Self.translations
        let values = ["minLength": String(minLength), "maxLength": String(maxLength), "maxSequence": String(maxSequence), "maxRepeated": String(maxRepeated)]
        var rules = [texts.text(maxLength < 72 ? "At least {minLength} characters, at most {maxLength}." : "At least {minLength} characters.", in: language, values)]
        if numericOnly { rules.append(texts.text("Digits only.", in: language)) }
        rules.append(texts.text(numericOnly ? "Not a common password." : "Not a common password, and not containing your username.", in: language))
        if maxSequence > 0 { rules.append(texts.text("No run of {maxSequence} sequential characters, such as 1234 or abcd.", in: language, values)) }
        if maxRepeated > 0 { rules.append(texts.text("Not {maxRepeated} identical characters in a row.", in: language, values)) }
        return rules
    }

    /// Checks a new secret; throws the first rule it breaks, each rule with its own error code.
    public func check(_ secret: String, username: String? = nil) throws(BrokerError) {
        let characters = Array(secret)
        if characters.count < minLength {
            throw BrokerError(.passwordTooShort, .badRequest, "Use at least \(minLength) characters.")
        }
        if secret.utf8.count > maxLength {
            throw BrokerError(.passwordTooLong, .badRequest, "Use at most \(maxLength) bytes.")
        }
        if numericOnly, !characters.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw BrokerError(.pinNotNumeric, .badRequest, "A PIN may contain digits only.")
        }
        let lowered = secret.lowercased()
        if CommonPasswords.contains(lowered) || denyList.contains(where: { $0.lowercased() == lowered }) {
            throw BrokerError(.passwordDenied, .badRequest, "This password is too common; choose another.")
        }
        if let username, username.count >= 3, lowered.contains(username.lowercased()) {
            throw BrokerError(.passwordContainsUsername, .badRequest, "The password must not contain the username.")
        }
        if maxSequence > 0, Self.longestSequentialRun(characters) >= maxSequence {
            throw BrokerError(.passwordSequence, .badRequest, "Avoid runs of \(maxSequence) or more sequential characters such as 1234 or abcd.")
        }
        if maxRepeated > 0, Self.longestRepeatedRun(characters) >= maxRepeated {
            throw BrokerError(.passwordRepeated, .badRequest, "Avoid \(maxRepeated) or more identical characters in a row.")
        }
    }

    /// Longest run of characters whose code points step by +1 or -1 throughout ("abcd", "4321").
    package static func longestSequentialRun(_ characters: [Character]) -> Int {
        let scalars = characters.map { $0.lowercased().unicodeScalars.first.map { Int($0.value) } ?? -1 }
        guard scalars.count > 1 else { return scalars.count }
        var longest = 1
        var run = 1
        var step = 0
        for index in 1..<scalars.count {
            let delta = scalars[index] - scalars[index - 1]
            if (delta == 1 || delta == -1), delta == step || run == 1 {
                step = delta
                run += 1
            } else if delta == 1 || delta == -1 {
                step = delta
                run = 2
            } else {
                step = 0
                run = 1
            }
            longest = max(longest, run)
        }
        return longest
    }

    package static func longestRepeatedRun(_ characters: [Character]) -> Int {
        var longest = 0
        var run = 0
        var previous: Character?
        for character in characters {
            run = character == previous ? run + 1 : 1
            previous = character
            longest = max(longest, run)
        }
        return longest
    }
}
