/// A value a challenge page shows the person as it is, to copy or keep: a key to type into an
/// authenticator app, recovery codes to write down. The challenge field `field` holds a string or an
/// array of strings (shown as a list); a page shows it under `label` in a fixed-width font.
public struct ChallengeFact: Sendable, Hashable {
    /// The challenge field holding the value.
    public var field: String
    /// The label shown above it.
    public var label: String

    /// A value shown from the challenge field `field`.
    public init(field: String, label: String) {
        self.field = field
        self.label = label
    }
}
