import GatehousePluginKit

extension FSSOPlugin {
    /// Every text a person sees from this plugin, in the languages the broker speaks.
    public static let translations = TextTranslations([
        "Assertion": ["de": "Assertion", "fr": "Assertion", "es": "Aserción", "nl": "Assertie"]
    ])
}
