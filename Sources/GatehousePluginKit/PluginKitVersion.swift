/// The plugin kit's version (semantic versioning): what a plugin built against this kit may count on.
/// Releases are tagged `kit-v<version>`; `make test` compares the API with the last tag and refuses a
/// breakage that docs/kit-changelog.md does not list.
public let pluginKitVersion = "1.1.0"
