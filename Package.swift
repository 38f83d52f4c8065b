// swift-tools-version:6.0
// OpenCoreData: Core Data's programming model in pure Swift, on a storage engine of
// its own. No package dependencies: the standard library, Foundation, Dispatch,
// Synchronization and Testing only. (The SQLite/GRDB comparison harness is its own
// package under Benchmarks/Peers.)
import PackageDescription

/// Debug builds check the storage engine's invariants as it runs (StorageEngine/Support/
/// InternalChecks.swift, README "Storage engine"); release builds compile the checks out.
let engineInternalChecks: [SwiftSetting] = [
    .define("STORAGE_ENGINE_INTERNAL_CHECKS", .when(configuration: .debug))
]

let package = Package(
    name: "OpenCoreData",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenCoreData", targets: ["OpenCoreData"]),
        .library(name: "StorageEngine", targets: ["StorageEngine"]),
        .executable(name: "storage-bench", targets: ["storage-bench"]),
        .executable(name: "opencoredata-fuzz", targets: ["opencoredata-fuzz"]),
        .executable(name: "opencoredata-store", targets: ["opencoredata-store"]),
    ],
    targets: [
        // The storage engine: named ordered trees of bytes, transactions, snapshots,
        // a copy-on-write page file and a write-ahead log. Knows nothing of entities.
        .target(name: "StorageEngine", swiftSettings: engineInternalChecks),
        // What users import: the Core Data programming model.
        .target(name: "OpenCoreData", dependencies: ["StorageEngine"]),
        // Shared by tests, the fuzzer and the benchmarks: seeded randomness, oracles,
        // simulated and fault-injecting I/O harnesses.
        .target(name: "TestSupport", dependencies: ["StorageEngine", "OpenCoreData"]),
        .executableTarget(
            name: "opencoredata-fuzz", dependencies: ["StorageEngine", "OpenCoreData", "TestSupport"],
            path: "Fuzz"),
        // The store inspector: schema, query, count, history, check, space, vacuum, migrate.
        .executableTarget(
            name: "opencoredata-store", dependencies: ["OpenCoreData", "StorageEngine"], path: "Sources/StoreInspector"),
        .executableTarget(
            name: "storage-bench", dependencies: ["StorageEngine", "OpenCoreData", "TestSupport"],
            path: "Benchmarks/StorageBench"),
        .testTarget(
            name: "StorageEngineTests", dependencies: ["StorageEngine", "TestSupport"],
            swiftSettings: engineInternalChecks),
        .testTarget(name: "OpenCoreDataTests", dependencies: ["OpenCoreData", "TestSupport"]),
        // The command-line tools run as processes (storage-bench, opencoredata-store) and the soak's ledger check.
        .testTarget(
            name: "StorageBenchTests",
            dependencies: ["storage-bench", "opencoredata-store", "OpenCoreData", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
