extension LockoutRule {
    enum ConfigKeys: String, CodingKey { case maxFailures, failureWindow, lockoutDuration, maxLockoutDuration, permanentAfter }

    /// Reads a plugin's `lockout:` section (`maxFailures`, `failureWindow`, `lockoutDuration`,
    /// `maxLockoutDuration`, `permanentAfter`: the lockout that no longer runs out, 0 for never),
    /// each missing key taken from `defaults`, each value checked, with exact paths in the errors.
    public static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, forKey key: Key, defaults: LockoutRule) throws -> LockoutRule {
        let path = container.codingPath + [key]
        let lock = container.contains(key) ? try container.nestedContainer(keyedBy: ConfigKeys.self, forKey: key) : nil
        let permanentAfter = try lock?.decodeIfPresent(Int.self, forKey: .permanentAfter) ?? defaults.permanentAfterLockouts ?? 0
        let rule = LockoutRule(
            maxFailures: try lock?.decodeIfPresent(Int.self, forKey: .maxFailures) ?? defaults.maxFailures,
            failureWindow: try lock?.decodeIfPresent(Seconds.self, forKey: .failureWindow) ?? defaults.failureWindow,
            lockoutDuration: try lock?.decodeIfPresent(Seconds.self, forKey: .lockoutDuration) ?? defaults.lockoutDuration,
            maxLockoutDuration: try lock?.decodeIfPresent(Seconds.self, forKey: .maxLockoutDuration) ?? defaults.maxLockoutDuration,
            permanentAfterLockouts: permanentAfter == 0 ? nil : permanentAfter
        )
        for (name, value, range) in [
            (ConfigKeys.maxFailures, rule.maxFailures, 1...100), (.failureWindow, rule.failureWindow.value, 60...604_800),
            (.lockoutDuration, rule.lockoutDuration.value, 1...604_800), (.maxLockoutDuration, rule.maxLockoutDuration.value, 1...31_536_000),
            (.permanentAfter, permanentAfter, 0...100),
        ] where !range.contains(value) {
            throw ConfigIssue(path: path + [name], "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        if rule.maxLockoutDuration < rule.lockoutDuration {
            throw ConfigIssue(path: path + [ConfigKeys.maxLockoutDuration], "must not be shorter than lockoutDuration")
        }
        return rule
    }
}
