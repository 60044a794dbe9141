import Activation
import CustomAPI
import DeviceAttestation
import DeviceKey
import EmailCode
import FSSO
import GatehouseCore
import LDAP
import LocalPassword
import OIDC
import PIN
import SAML
import TOTP
import WebAuthn

/// The plugin types built into the broker. Adding a plugin adds its import and one `register` line
/// here, and its entry in Package.swift's `builtInPlugins` (docs/writing-a-plugin.md).
public enum BuiltInPlugins {
    public static var registry: PluginRegistry {
        var registry = PluginRegistry()
        registry.register(LocalPasswordPlugin.self)
        registry.register(FSSOPlugin.self)
        registry.register(LDAPPlugin.self)
        registry.register(CustomAPIPlugin.self)
        registry.register(EmailCodePlugin.self)
        registry.register(OIDCPlugin.self)
        registry.register(DeviceKeyPlugin.self)
        registry.register(PINPlugin.self)
        registry.register(DeviceAttestationPlugin.self)
        registry.register(ActivationPlugin.self)
        registry.register(TOTPPlugin.self)
        registry.register(WebAuthnPlugin.self)
        registry.register(SAMLPlugin.self)
        return registry
    }
}
