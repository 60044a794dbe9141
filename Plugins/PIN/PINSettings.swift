import GatehousePluginKit
import GatehouseSupport

/// A `pin` instance's settings for one app (`policy.plugins.<instance>`; before, the policy's
/// `pinPolicy`): the rules a new PIN must follow (`PINRules`, from GatehouseSupport).
extension PINRules: PluginSettings {
    public init() { self.init(minLength: 6) }

    public static let formerPolicyKeys = [FormerPolicyKey("pinPolicy")]
}
