/// The embedded default configuration: a copy of `config/gatehouse.yaml`, so that `gatehouse serve`
/// runs from anywhere with no file. `make test` checks that the two are the same
/// (`gatehouse default-config | diff - config/gatehouse.yaml`).
enum DefaultConfig {
    static let yaml = #"""
        # Gatehouse default configuration: SQLite, the built-in `local` password provider, device keys with a
        # PIN, and two demo apps (a web app with passwords, a phone app with a device key and a PIN).
        # Runs with no external service. Every key is described in docs/configuration.md.
        environment: development

        server:
          listen: 127.0.0.1:8080
          # issuer defaults to http://<listen>; set it to the public https URL in production.

        storage:
          sqlite:
            path: data/gatehouse.sqlite

        tokens:
          signingAlgorithm: ES256

        providers:
          - id: local
            type: local
            config:
              bcryptCost: 12
          # A phone's own sign-in key and a PIN, for the demo phone app (and gatehouse-client-demo).
          - id: device
            type: device-key
          - id: pin
            type: pin

        apps:
          - id: demo
            name: Demo app
            redirectURIs:
              - http://127.0.0.1:8081/callback
            policy:
              identityProviders: [local]
              selfRegistration: true
              accessTokenLifetime: 15m
              refreshTokenLifetime: 30d
              defaultScopes: [openid, profile]
          - id: demo-phone
            name: Demo phone app
            policy:
              identityProviders: [device]
              authenticators: [pin]
              secondFactor: pin
              selfRegistration: true
              defaultScopes: [openid, profile]
        """#
}
