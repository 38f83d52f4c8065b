// `storage-bench soak-inspect STORE KEY...` (hidden): what a kept soak store holds of
// the owners and items with the given keys (full keys, or WRITER:SERIAL as violations
// print them): row version, note and relationships, to tell which save wrote them last.
import Foundation
import OpenCoreData

enum SoakInspect {
    static func run(_ arguments: [String]) -> Int32 {
        guard let path = arguments.first else {
            printError("soak-inspect STORE KEY...")
            return ExitStatus.usage
        }
        do {
            let coordinator = try SoakModel.coordinator(url: URL(fileURLWithPath: path), durability: "full")
            let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            try context.performAndWait {
                for text in arguments.dropFirst() {
                    guard let key = key(text) else { continue }
                    if let owner = try SoakModel.owner(key, in: context) {
                        let items = (owner.items?.array as? [SoakItem])?.map { serial($0.key) } ?? []
                        print(
                            "Owner \(text) \(owner.objectID.uriRepresentation().lastPathComponent): "
                                + "writer \(owner.writer ?? "nil"), note \(owner.note ?? "nil"), items \(items), "
                                + "tags \(owner.tags.map { $0.name ?? "nil" }.sorted()), "
                                + "favorite \(owner.favorite?.name ?? "nil")")
                    }
                    if let item = try SoakModel.item(key, in: context) {
                        print(
                            "Item \(text) \(item.objectID.uriRepresentation().lastPathComponent): value \(item.value), "
                                + "owner \(item.owner.map { serial($0.key) } ?? "nil")")
                    }
                }
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            return ExitStatus.success
        } catch {
            printError("soak-inspect: \(error)")
            return ExitStatus.failure
        }
    }

    private static func serial(_ key: Int64) -> String { "\(key >> 40):\(key & (1 << 40 - 1))" }

    /// A full key, or "c4:8768" / "4:8768" (writer number and serial).
    private static func key(_ text: String) -> Int64? {
        if let key = Int64(text) { return key }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let serial = Int64(parts[1]) else { return nil }
        var writer = String(parts[0])
        var base: Int64 = 0
        if writer.hasPrefix("c") {
            writer.removeFirst()
        } else if writer.hasPrefix("p") {
            writer.removeFirst()
            base = 100
        }
        guard let number = Int64(writer) else { return nil }
        return (base + number) << 40 | serial
    }
}
