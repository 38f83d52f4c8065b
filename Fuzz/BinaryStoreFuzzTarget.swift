// Fuzz target for the binary store file and the history records inside it: a real
// store file, saved through the public API, is damaged (bit flips, truncation,
// garbage, or changes behind a recomputed checksum) and reopened. Opening must fail
// with an error or give a store whose objects and history read without a trap; damage
// the checksum would see must always be refused.
import Foundation
import OpenCoreData
import StorageEngine
import TestSupport

extension FuzzTarget {
    /// Damaged binary store files: refused cleanly or read without a trap.
    static let binaryStoreFile = FuzzTarget(
        name: "binary-store", summary: "damaged NSBinaryStoreType files (and their history) reopen or fail cleanly"
    ) { random in
        let files = SimulatedFileSystem()
        let path = "/fuzz/Store.binary"
        let coordinator = try BinaryStoreFuzz.open(files, path)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try BinaryStoreFuzz.randomSaves(context, &random)
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        guard let good = files.contents(ofPath: path), good.count > 40 else {
            throw FuzzFailure(description: "the binary store wrote no file")
        }
        var damaged = good
        let forged = random.chance(0.5)
        switch random.int(in: 0...2) {
        case 0:
            for _ in 0...random.int(in: 0...3) {
                let index = random.int(in: 0...(damaged.count - 1))
                damaged[index] ^= UInt8(1) << UInt8(random.int(in: 0...7))
            }
        case 1:
            damaged = Array(damaged[..<random.int(in: 0...(damaged.count - 1))])
        default:
            let start = random.int(in: 0...(damaged.count - 1))
            let end = min(damaged.count, start + random.int(in: 1...16))
            for index in start..<end { damaged[index] = UInt8(truncatingIfNeeded: random.next()) }
        }
        if forged, damaged.count > 32 {
            let sum = StorageChecksum.xxh64(Array(damaged.dropLast(8)))
            damaged.replaceSubrange((damaged.count - 8)..., with: withUnsafeBytes(of: sum.littleEndian, Array.init))
        }
        files.setContents(damaged, ofPath: path)
        guard let reopened = try? BinaryStoreFuzz.open(files, path) else { return }
        if !forged && damaged != good {
            throw FuzzFailure(description: "a damaged binary store file opened without an error")
        }
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = reopened
        for entity in ["Item", "Box"] {
            for object in (try? reader.fetch(NSFetchRequest<NSManagedObject>(entityName: entity))) ?? [] {
                for name in object.entity.propertiesByName.keys { _ = try? object.readValue(forKey: name) }
            }
        }
        let history = NSPersistentHistoryChangeRequest.fetchHistory(after: nil as NSPersistentHistoryToken?)
        if let result = try? reader.execute(history) as? NSPersistentHistoryResult,
            let transactions = result.result as? [NSPersistentHistoryTransaction]
        {
            for transaction in transactions { _ = transaction.objectIDNotification() }
        }
    }
}

/// The model and workload of the binary store fuzz target.
enum BinaryStoreFuzz {
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            let attribute = NSAttributeDescription()
            attribute.name = name
            attribute.attributeType = type
            attribute.isOptional = true
            return attribute
        }
        let item = NSEntityDescription()
        item.name = "Item"
        let box = NSEntityDescription()
        box.name = "Box"
        let items = NSRelationshipDescription()
        items.name = "items"
        items.destinationEntity = item
        items.maxCount = 0
        let owner = NSRelationshipDescription()
        owner.name = "box"
        owner.destinationEntity = box
        owner.maxCount = 1
        items.inverseRelationship = owner
        owner.inverseRelationship = items
        let title = attribute("title", .stringAttributeType)
        title.preservesValueInHistoryOnDeletion = true
        item.properties = [
            title, attribute("count", .integer64AttributeType), attribute("payload", .binaryDataAttributeType),
            attribute("when", .dateAttributeType), attribute("ratio", .doubleAttributeType), owner,
        ]
        box.properties = [attribute("label", .stringAttributeType), items]
        let model = NSManagedObjectModel()
        model.entities = [item, box]
        return model
    }()

    static func open(_ files: SimulatedFileSystem, _ path: String) throws -> NSPersistentStoreCoordinator {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: NSBinaryStoreType, configurationName: nil, at: URL(fileURLWithPath: path),
            options: ["OpenCoreDataStorageFileSystem": files, NSPersistentHistoryTrackingKey: true as NSNumber])
        return coordinator
    }

    static func randomSaves(_ context: NSManagedObjectContext, _ random: inout SeededRandom) throws {
        var items: [NSManagedObject] = []
        for _ in 0...random.int(in: 0...2) {
            let box = NSEntityDescription.insertNewObject(forEntityName: "Box", into: context)
            box.setValue("box", forKey: "label")
            for index in 0..<random.int(in: 0...6) {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Item", into: context)
                item.setValue("item \(index) é", forKey: "title")
                item.setValue(Int64(random.int(in: -1_000...1_000)), forKey: "count")
                item.setValue(Data(random.bytes(random.int(in: 0...20))), forKey: "payload")
                item.setValue(Date(timeIntervalSince1970: Double(random.int(in: 0...1_000_000))), forKey: "when")
                item.setValue(box, forKey: "box")
                items.append(item)
            }
            if let victim = items.popLast(), random.chance(0.3) { context.delete(victim) }
            if let changed = items.first { changed.setValue(Double(random.int(in: 0...9)) / 3, forKey: "ratio") }
            try context.save()
        }
    }
}
