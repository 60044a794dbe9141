import GatehousePluginKit

/// The `local` plugin type: accounts whose passwords the broker keeps itself, hashed with bcrypt,
/// like Dex's password database. Needs no external service, so the default config can sign people in.
public enum LocalPasswordPlugin: PluginFactory {
    public static let typeName = "local"

    /// `providers[].config` of a `local` instance.
    public struct Config: Decodable, Sendable {
        /// Bcrypt work factor (2^cost rounds). 12 by default; below 10 is for tests only.
        public var bcryptCost: Int

        enum CodingKeys: String, CodingKey { case bcryptCost }

        public init(bcryptCost: Int = 12) { self.bcryptCost = bcryptCost }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.bcryptCost = try container.decodeIfPresent(Int.self, forKey: .bcryptCost) ?? 12
            guard (4...16).contains(bcryptCost) else {
                throw ConfigIssue(path: decoder.codingPath + [CodingKeys.bcryptCost], "must be between 4 and 16, got \(bcryptCost)")
            }
        }
    }

    public static let challenges = [LocalPasswordProvider.changePassword]

    public static func make(id: String, config: Config, environment: PluginEnvironment) throws -> LocalPasswordProvider {
        if config.bcryptCost < 10 {
            environment.logger.warning(
                "bcryptCost below 10 makes stolen password hashes cheap to crack; use it for tests only", metadata: ["bcryptCost": "\(config.bcryptCost)"])
        }
        return LocalPasswordProvider(id: id, cost: config.bcryptCost, environment: environment)
    }
}
