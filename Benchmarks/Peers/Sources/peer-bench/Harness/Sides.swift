// The sides each group compares, in the order they run. A side is an adapter type;
// these lists turn each into a closure so the runner can hold them in one array
// while every workload still runs generically over the concrete adapter.
import Foundation

struct EngineSide {
    let name: String
    let run: (any EngineWorkload, BenchContext) throws -> [Measurement]

    static func of<Engine: KeyValueEngine>(_ engine: Engine.Type) -> EngineSide {
        EngineSide(name: Engine.sideName) { workload, context in try workload.run(Engine.self, in: context) }
    }
}

struct ObjectSide {
    let name: String
    let run: (any ObjectWorkload, BenchContext) throws -> [Measurement]

    static func of<Store: ObjectStore>(_ store: Store.Type) -> ObjectSide {
        ObjectSide(name: Store.sideName) { workload, context in try workload.run(Store.self, in: context) }
    }
}

struct AppSide {
    let name: String
    let run: (any AppWorkload, BenchContext) throws -> [Measurement]

    static func of<Store: AppStore>(_ store: Store.Type) -> AppSide {
        AppSide(name: Store.sideName) { workload, context in try workload.run(Store.self, in: context) }
    }
}

enum AppSides {
    static var all: [AppSide] { [.of(OursAppStore.self), .of(SQLiteAppStore.self), .of(GRDBAppStore.self)] }
    /// Printed under the table.
    static var notes: [String] {
        [
            "durability \(AppDurability.current.rawValue) (app/save-durable: full); \"ours\" is driven only through "
                + "the public Core Data API (Apps/OursAppStore.swift): predicates built per call with NSPredicate(format:), "
                + "objects materialised as registered NSManagedObjects; SQLite and GRDB key Person by its id "
                + "(INTEGER PRIMARY KEY), ours by an indexed id attribute."
        ]
    }
}

enum EngineSides {
    static var all: [EngineSide] { [.of(OursKeyValueEngine.self), .of(SQLiteKeyValueEngine.self)] }
    /// Printed under the table.
    static let notes = [
        "\"ours\" is the StorageEngine with its default options (4 KiB pages, 256 MiB page cache); "
            + "SQLite runs with its defaults apart from WAL, synchronous and the page cache (see the header)."
    ]
}

enum ObjectSides {
    static var all: [ObjectSide] {
        [.of(OursObjectStore.self), .of(SQLiteObjectStore.self), .of(GRDBObjectStore.self)]
    }
    /// Printed under the table.
    static let notes = [
        "\"ours\" is OpenCoreData's default on-disk store (PageFileStore, NSSQLiteStoreType) at full durability: "
            + "each fetched object is a registered, filled NSManagedObject read into a Person; "
            + "SQLite and GRDB decode rows straight into Person values (see Objects/OursObjectStore.swift)."
    ]
}
