/// The broker speaks the plugin kit's types (apps, policies, challenges, identities): whoever uses the
/// broker sees them too.
@_exported import GatehousePluginKit
@_exported import GatehouseSupport
