// swift-tools-version:6.1
import PackageDescription

// Layers (see docs/architecture.md): GatehouseCore <- GatehouseStore, Plugins/* <- GatehouseServer <- gatehouse.
// GatehouseCore depends on no HTTP framework and no database driver; a plugin depends on GatehouseCore only
// (plus its own third-party library).
let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .library(name: "GatehouseCore", targets: ["GatehouseCore"]),
        .library(name: "GatehouseTesting", targets: ["GatehouseTesting"]),
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
    ],
    targets: [
        .target(
            name: "GatehouseCore",
            dependencies: [
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
            ]
        ),
        .target(
            name: "LocalPassword",
            dependencies: [
                "GatehouseCore",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
            ],
            path: "Plugins/LocalPassword"
        ),
        .systemLibrary(name: "CLDAP", path: "Plugins/CLDAP", providers: [.apt(["libldap2-dev"])]),
        .target(
            name: "LDAP",
            dependencies: ["GatehouseCore", "CLDAP", .product(name: "Logging", package: "swift-log")],
            path: "Plugins/LDAP"
        ),
        .target(
            name: "CustomAPI",
            dependencies: ["GatehouseCore", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
            path: "Plugins/CustomAPI"
        ),
        .target(
            name: "EmailCode",
            dependencies: ["GatehouseCore", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
            path: "Plugins/EmailCode"
        ),
        .target(
            name: "FSSO",
            dependencies: [
                "GatehouseCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Plugins/FSSO"
        ),
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
            ]
        ),
        .target(
            name: "GatehouseHTTP",
            dependencies: ["GatehouseCore", .product(name: "AsyncHTTPClient", package: "async-http-client")]
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
            dependencies: ["GatehouseCore", "GatehouseStore", "GatehouseHTTP", "GatehouseMail"]
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "GatehouseCore",
                "GatehouseStore",
                "GatehouseServer",
                "GatehouseHTTP",
                "GatehouseMail",
                "LocalPassword",
                "EmailCode",
                "FSSO",
                "LDAP",
                "CustomAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "GatehouseCoreTests",
            dependencies: ["GatehouseCore", "GatehouseTesting", .product(name: "Prometheus", package: "swift-prometheus")]
        ),
        .testTarget(name: "GatehouseStoreTests", dependencies: ["GatehouseStore", "GatehouseTesting"]),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer", "GatehouseTesting", "LocalPassword",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(name: "LocalPasswordTests", dependencies: ["LocalPassword", "GatehouseTesting"]),
        .testTarget(name: "LDAPTests", dependencies: ["LDAP", "GatehouseTesting"]),
        .testTarget(name: "EmailCodeTests", dependencies: ["EmailCode", "LocalPassword", "GatehouseTesting", "GatehouseStore"]),
        .testTarget(name: "GatehouseMailTests", dependencies: ["GatehouseMail", "GatehouseTesting"]),
        .testTarget(name: "CustomAPITests", dependencies: ["CustomAPI", "GatehouseTesting", "GatehouseStore", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "FSSOTests",
            dependencies: [
                "FSSO", "GatehouseTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
    ]
)
