import GatehousePluginKit
/// What an app accepts as a new PIN: a length between 4 and 32 (XignSys asks for 5 to 32, NIST SP
/// 800-63B for at least 6 on activation secrets, the default), digits only or not, no deny-listed
/// PIN, no runs of sequential or repeated digits. Each rule refuses with its own code, which a client
/// shows while the person stays on the same `create_pin` challenge.
public struct PINRules: Sendable, Hashable, Codable {
    /// The fewest digits (4 to 32).
    public var minLength: Int
    /// The most digits (`minLength` to 32).
    public var maxLength: Int
    /// Digits only.
    public var digitsOnly: Bool
    /// Refuse a run of this many (or more) sequential characters such as `123` or `987`; 0 turns it off.
    public var maxSequence: Int
    /// Refuse this many (or more) identical characters in a row such as `000`; 0 turns it off.
    public var maxRepeated: Int
    /// Refused on top of the built-in list of the most common PINs.
    public var denyList: [String]

    /// PIN rules; the defaults follow NIST SP 800-63B for activation secrets.
    public init(minLength: Int = 6, maxLength: Int = 32, digitsOnly: Bool = true, maxSequence: Int = 4, maxRepeated: Int = 3, denyList: [String] = []) {
        self.minLength = minLength
        self.maxLength = maxLength
        self.digitsOnly = digitsOnly
        self.maxSequence = maxSequence
        self.maxRepeated = maxRepeated
        self.denyList = denyList
    }

    /// The shortest and longest PIN any policy may ask for.
    public static let lengthLimits = 4...32

    /// PINs people choose most (published analyses of leaked PIN sets); never accepted.
    public static let commonPINs: Set<String> = [
        "0000", "1111", "1212", "1234", "1004", "2000", "2222", "3333", "4321", "4444", "5555", "6666", "6969", "7777", "8888", "9999",
        "000000", "111111", "112233", "121212", "123123", "123321", "123456", "131313", "159753", "654321", "666666", "696969",
        "777777", "789456", "888888", "999999", "00000000", "12345678", "11111111", "87654321",
    ]

    enum CodingKeys: String, CodingKey { case minLength, maxLength, digitsOnly, maxSequence, maxRepeated, denyList }

    /// Reads PIN rules with defaults, refusing impossible values with their path.
    public init(from decoder: any Decoder) throws {
        let defaults = PINRules()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        minLength = try container.decodeIfPresent(Int.self, forKey: .minLength) ?? defaults.minLength
        maxLength = try container.decodeIfPresent(Int.self, forKey: .maxLength) ?? defaults.maxLength
        digitsOnly = try container.decodeIfPresent(Bool.self, forKey: .digitsOnly) ?? defaults.digitsOnly
        maxSequence = try container.decodeIfPresent(Int.self, forKey: .maxSequence) ?? defaults.maxSequence
        maxRepeated = try container.decodeIfPresent(Int.self, forKey: .maxRepeated) ?? defaults.maxRepeated
        denyList = try container.decodeIfPresent([String].self, forKey: .denyList) ?? defaults.denyList
        let path = decoder.codingPath
        guard Self.lengthLimits.contains(minLength) else { throw ConfigIssue(path: path + [CodingKeys.minLength], "must be between 4 and 32, got \(minLength)") }
        guard (minLength...Self.lengthLimits.upperBound).contains(maxLength) else {
            throw ConfigIssue(path: path + [CodingKeys.maxLength], "must be between minLength (\(minLength)) and 32, got \(maxLength)")
        }
        if maxSequence < 0 || maxSequence == 1 || maxSequence == 2 { throw ConfigIssue(path: path + [CodingKeys.maxSequence], "must be 0 (off) or at least 3") }
        if maxRepeated < 0 || maxRepeated == 1 { throw ConfigIssue(path: path + [CodingKeys.maxRepeated], "must be 0 (off) or at least 2") }
    }

    /// Checks a new PIN; throws the first rule it breaks, as a refusal that does not count as a wrong
    /// answer: the person chooses again on the same challenge.
    public func check(_ pin: String) throws(BrokerError) {
        let characters = Array(pin)
        if digitsOnly, !characters.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw refused(.pinNotNumeric)
        }
        if characters.count < minLength { throw refused(.pinTooShort) }
        if characters.count > maxLength { throw refused(.pinTooLong) }
        if maxSequence > 0, PasswordPolicy.longestSequentialRun(characters) >= maxSequence {
            throw refused(.pinSequence)
        }
        if maxRepeated > 0, PasswordPolicy.longestRepeatedRun(characters) >= maxRepeated {
            throw refused(.pinRepeated)
        }
        if Self.commonPINs.contains(pin) || denyList.contains(pin) {
            throw refused(.pinDenied)
        }
    }
}
