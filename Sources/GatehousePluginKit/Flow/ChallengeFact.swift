/// A value a challenge page shows the person as it is, to copy or keep: a key to type into an
/// authenticator app, recovery codes to write down. The challenge field `field` holds a string or an
/// array of strings (shown as a list); a page shows it under `label` in a fixed-width font.
package struct ChallengeFact: Sendable, Hashable {
    /// The challenge field holding the value.
    package var field: String
    /// The label shown above it.
    package var label: String

    /// A value shown from the challenge field `field`.
    package init(field: String, label: String) {
        self.field = field
        self.label = label
    }
}
