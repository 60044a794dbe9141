import GatehousePluginKit
#if canImport(Glibc)
import Glibc
#endif

/// The `ldap` plugin type: sign-in with a directory username and password through OpenLDAP's libldap
/// (search-then-bind), groups and attributes mapped to claims; Active Directory with its defaults,
/// refusal reasons and password change (`activeDirectory: true`). See docs/plugins/ldap.md.
public enum LDAPPlugin: PluginFactory {
    public static let typeName = "ldap"
    public typealias Settings = LDAPSettings
    public static let challenges = [LDAPProvider.changePasswordChallenge]

    public static func make(id: String, config: LDAPConfig, environment: PluginEnvironment) throws -> LDAPProvider {
        // libldap writes to sockets the directory may have closed; the process must get an error from
        // write(), not be killed by SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let logger = environment.logger
        if config.insecureSkipVerify {
            guard environment.development else {
                throw ConfigIssue(
                    path: [LDAPConfig.CodingKeys.insecureSkipVerify],
                    "turns off the check of the directory's certificate and is refused outside environment: development; give rootCA (the directory's CA) instead"
                )
            }
            logger.critical(
                "insecureSkipVerify is on: the directory's certificate is NOT checked, so anyone on the network path can read every password",
                metadata: ["provider": .string(id)]
            )
        }
        if config.sendsPasswordsInClear {
            guard environment.development || config.insecureNoTLS else {
                throw ConfigIssue(
                    path: [LDAPConfig.CodingKeys.url],
                    "sends passwords in the clear to another host: use ldaps:// or startTLS: true (or insecureNoTLS: true if that is really meant)"
                )
            }
            logger.warning(
                "the directory is reached without TLS: passwords cross the network in the clear; use ldaps:// or startTLS", metadata: ["provider": .string(id)])
        }
        return LDAPProvider(id: id, config: config, environment: environment)
    }
}
