/// The script a challenge page runs, for a step a browser can only do in JavaScript (a WebAuthn
/// ceremony). The plugin declares its source with the challenge; the server serves it as a static
/// file (`/assets/challenges/<type>.js`) and lets the page run that one file and nothing else
/// (`script-src` naming its URL): no inline script. The page hands it the challenge fields named in
/// `data` as JSON in `#challenge-data`'s `data-challenge` attribute; the script answers by filling
/// the form's inputs and submitting it, so the answer goes through the same checks as any other.
package struct ChallengeScript: Sendable, Hashable {
    /// The JavaScript source.
    package var source: String
    /// The challenge fields the script reads.
    package var data: [String]

    /// A script and the challenge fields it reads.
    package init(source: String, data: [String]) {
        self.source = source
        self.data = data
    }
}
