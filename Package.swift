// swift-tools-version:6.1
import PackageDescription

// Layers (see docs/architecture.md): GatehousePluginKit <- Plugins/*, GatehouseCore (the broker) <- GatehouseStore
// <- GatehouseServer <- gatehouse. A plugin depends on GatehousePluginKit only (plus its own third-party library);
// GatehouseCore depends on no HTTP framework, no database driver and no plugin.
/// A plugin built into the broker: its folder under Plugins/ (the target's name), what it depends on
/// besides GatehousePluginKit, and what its test target (Tests/<name>Tests) needs besides GatehouseTesting.
struct BuiltInPlugin {
    var name: String
    var dependencies: [Target.Dependency] = []
    var testDependencies: [Target.Dependency] = []
}

/// The built-in plugins: adding a plugin adds one entry here (and one registration line in
/// Plugins/BuiltIn/BuiltInPlugins.swift). See docs/writing-a-plugin.md.
let builtInPlugins: [BuiltInPlugin] = [
    BuiltInPlugin(name: "LocalPassword", dependencies: [.product(name: "HummingbirdBcrypt", package: "hummingbird-auth")]),
    BuiltInPlugin(
        name: "LDAP", dependencies: ["CLDAP", .product(name: "Logging", package: "swift-log")], testDependencies: [.product(name: "Logging", package: "swift-log")]
    ),
    BuiltInPlugin(
        name: "CustomAPI", dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
        testDependencies: ["GatehouseStore", .product(name: "Crypto", package: "swift-crypto")]
    ),
    BuiltInPlugin(
        name: "EmailCode", dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
        testDependencies: ["LocalPassword", "GatehouseStore"]
    ),
    BuiltInPlugin(
        name: "OIDC",
        dependencies: [
            .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
        ],
        testDependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"), "GatehouseStore"]
    ),
    BuiltInPlugin(
        name: "FSSO", dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto")],
        testDependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto")]
    ),
    BuiltInPlugin(name: "DeviceKey", testDependencies: ["GatehouseStore", .product(name: "Crypto", package: "swift-crypto")]),
    BuiltInPlugin(name: "TOTP", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
    BuiltInPlugin(
        name: "WebAuthn",
        dependencies: [
            "GatehouseAttestation", .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ],
        testDependencies: ["GatehouseAttestation", "GatehouseStore", .product(name: "Crypto", package: "swift-crypto")]
    ),
    BuiltInPlugin(
        name: "PIN", dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "HummingbirdBcrypt", package: "hummingbird-auth")],
        testDependencies: ["GatehouseStore"]
    ),
    BuiltInPlugin(
        name: "DeviceAttestation",
        dependencies: [
            "GatehouseAttestation", .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
            .product(name: "Logging", package: "swift-log"),
        ],
        testDependencies: [
            "DeviceKey", "GatehouseStore", "GatehouseAttestation", .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ]
    ),
    BuiltInPlugin(
        name: "Activation", dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "HummingbirdBcrypt", package: "hummingbird-auth")],
        testDependencies: ["DeviceKey", "PIN", "EmailCode", "GatehouseStore", .product(name: "Crypto", package: "swift-crypto")]
    ),
    BuiltInPlugin(
        name: "SAML", dependencies: ["CXMLSec", .product(name: "_CryptoExtras", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
        testDependencies: [
            "CXMLSec", "GatehousePluginKit", "GatehouseStore", .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ]
    ),
]

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .library(name: "GatehousePluginKit", targets: ["GatehousePluginKit"]),
        // Helpers plugins may use beside the kit (JOSE, digests and random tokens, PKCE, concurrency).
        .library(name: "GatehouseSupport", targets: ["GatehouseSupport"]),
        .library(name: "GatehouseCore", targets: ["GatehouseCore"]),
        .library(name: "GatehouseTesting", targets: ["GatehouseTesting"]),
        // The client SDK an app adds: it depends on no server code (docs/client-sdk.md).
        .library(name: "GatehouseClient", targets: ["GatehouseClient"]),
        .executable(name: "gatehouse-client-demo", targets: ["gatehouse-client-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        // The plugin API: everything a plugin may see, and nothing of the broker's machinery.
        .target(
            name: "GatehousePluginKit",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // What plugins and the broker share beside the contract: JOSE, digests and random tokens,
        // PKCE, loopback hosts, blocking work and concurrency limits. Not part of the kit's version.
        .target(
            name: "GatehouseSupport",
            dependencies: ["GatehousePluginKit", .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto")]
        ),
        .target(
            name: "GatehouseCore",
            dependencies: [
                "GatehousePluginKit",
                "GatehouseSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "GatehouseStore",
            dependencies: [
                "GatehouseCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .systemLibrary(name: "CLDAP", path: "Plugins/CLDAP", providers: [.apt(["libldap2-dev"])]),
        // xmlsec1 (OpenSSL back end) on libxml2, for the `saml` plugin's XML signatures and encryption.
        .systemLibrary(name: "CXMLSec", path: "Plugins/CXMLSec", pkgConfig: "xmlsec1-openssl", providers: [.apt(["libxmlsec1-dev"])]),
        .target(name: "CConcurrencyHook"),
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "GatehouseHTTP",
            dependencies: [
                "GatehouseCore", .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "GatehouseMail",
            dependencies: [
                "GatehouseCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "GatehouseTesting",
            dependencies: [
                "GatehouseCore", "GatehouseStore", "GatehouseHTTP", "GatehouseMail", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "CConcurrencyHook",
                "GatehouseCore",
                "GatehouseStore",
                "GatehouseServer",
                "GatehouseHTTP",
                "GatehouseMail",
                "GatehousePlugins",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ]
        ),
        .target(name: "GatehouseClient", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .executableTarget(
            name: "gatehouse-client-demo",
            dependencies: ["GatehouseClient", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(
            name: "GatehouseClientTests",
            dependencies: [
                "GatehouseClient", "GatehouseTesting", "GatehouseCore", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "GatehouseCoreTests",
            dependencies: ["GatehouseCore", "GatehouseTesting", .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        .testTarget(name: "GatehouseStoreTests", dependencies: ["GatehouseStore", "GatehouseCore", "GatehouseTesting", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer", "GatehouseCore", "GatehouseStore", "GatehouseTesting", "GatehouseSupport", "GatehousePlugins", "LocalPassword", "RiddlePlugin",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "GatehouseMailTests", dependencies: ["GatehouseMail", "GatehouseCore", "GatehouseTesting"]),
        // The test-only `riddle` plugin (a challenge type the server has never heard of) and a broker
        // serving it, for the headless-browser check of the plugin boundary.
        .target(name: "RiddlePlugin", dependencies: ["GatehousePluginKit", "GatehouseSupport"], path: "Tests/RiddlePlugin"),
        .executableTarget(
            name: "riddle-broker",
            dependencies: [
                "GatehouseCore", "GatehouseStore", "GatehouseServer", "RiddlePlugin",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/RiddleBroker"
        ),
        // The plugins of docs/writing-a-plugin.md, compiled as the guide shows them (its code blocks
        // are these files) and run through the flow engine by their tests.
        .target(
            name: "GuideExamples",
            dependencies: [
                "GatehousePluginKit", "GatehouseSupport", .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/GuideExamples"
        ),
        .testTarget(name: "GuideExamplesTests", dependencies: ["GuideExamples", "GatehouseCore", "GatehouseTesting"]),
        // What device-attestation and webauthn share: CBOR, X.509 attestation certificates and their
        // paths, Android's key description, the platforms' pinned roots.
        .target(
            name: "GatehouseAttestation",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // Registers the built-in plugins (Plugins/BuiltIn/BuiltInPlugins.swift): the one place that names them.
        .target(name: "GatehousePlugins", dependencies: ["GatehouseCore"] + builtInPlugins.map { .target(name: $0.name) }, path: "Plugins/BuiltIn"),
    ]
        + builtInPlugins.map { plugin in
            .target(name: plugin.name, dependencies: ["GatehousePluginKit", "GatehouseSupport"] + plugin.dependencies, path: "Plugins/\(plugin.name)")
        }
        + builtInPlugins.map { plugin in
            .testTarget(name: "\(plugin.name)Tests", dependencies: [.target(name: plugin.name), "GatehouseCore", "GatehouseTesting"] + plugin.testDependencies)
        }
)
