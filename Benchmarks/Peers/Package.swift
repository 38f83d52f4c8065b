// swift-tools-version:6.0
// peer-bench: runs the storage engine's and the object store's workloads side by side
// on our StorageEngine, on SQLite's C API and on GRDB, in one process run, and prints
// ratios. It is its own package so the root package stays dependency-free: only this
// package depends on GRDB and links the system libsqlite3 (see setup.sh).
import PackageDescription

let package = Package(
    name: "Peers",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "peer-bench", targets: ["peer-bench"])
    ],
    dependencies: [
        // The root package (OpenCoreData); named, because a path dependency's identity
        // is otherwise its checkout's folder name, which differs between worktrees.
        .package(name: "OpenCoreData", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // SQLite's C API from the system's libsqlite3. Not named SQLite3 or GRDBSQLite,
        // so it cannot clash with the module GRDB brings for the same library.
        .systemLibrary(
            name: "PeersSQLite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "peer-bench",
            dependencies: [
                "PeersSQLite3",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "StorageEngine", package: "OpenCoreData"),
                .product(name: "OpenCoreData", package: "OpenCoreData"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
