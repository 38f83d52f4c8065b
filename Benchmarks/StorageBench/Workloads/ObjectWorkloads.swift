// Object-level workloads: the Core Data programming model end to end (objects,
// context, save, fetch) on a store. Compare with GRDB record insertion later.
import Foundation
import OpenCoreData

/// The benchmark record: six attributes, typed accessors.
final class BenchRecord: NSManagedObject {
    @Managed var name: String?
    @Managed var age: Int16
    @Managed var score: Int64
    @Managed var weight: Double
    @Managed var created: Date?
    @Managed var active: Bool
}

enum ObjectBench {
    /// One model per process, as Core Data recommends.
    static let model: NSManagedObjectModel = {
        func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
            ModelDescriptions.attribute(name, type)
        }
        let entity = ModelDescriptions.entity("Record", BenchRecord.self)
        entity.properties = [
            attribute("name", .stringAttributeType), attribute("age", .integer16AttributeType),
            attribute("score", .integer64AttributeType), attribute("weight", .doubleAttributeType),
            attribute("created", .dateAttributeType), attribute("active", .booleanAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [entity]
        return model
    }()
}

extension Workload {
    /// Insert and save N objects with 6 attributes, fetch them all in a fresh context,
    /// read one attribute of each (documented scale: 100,000 objects).
    static let objectInMemory = Workload(
        name: "object/in-memory", summary: "100k objects, 6 attributes: insert+save, fetch, read"
    ) { bench in
        let count = bench.scaled(100_000)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: ObjectBench.model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let writer = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        writer.persistentStoreCoordinator = coordinator
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        var insertSeconds = 0.0
        var saveSeconds = 0.0
        try writer.performAndWait {
            insertSeconds = measureSeconds {
                for index in 0..<count {
                    let record = BenchRecord(context: writer)
                    record.name = "record \(index)"
                    record.age = Int16(truncatingIfNeeded: index % 100)
                    record.score = Int64(index) * 7
                    record.weight = Double(index) * 0.5
                    record.created = base.addingTimeInterval(Double(index))
                    record.active = index % 2 == 0
                }
            }
            bench.progress("in-memory store: saving \(grouped(count)) objects")
            saveSeconds = try measureSeconds { try writer.save() }
        }
        let reader = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        reader.persistentStoreCoordinator = coordinator
        var records: [BenchRecord] = []
        var total: Int64 = 0
        let (fetchSeconds, readSeconds) = try reader.performAndWait {
            let fetchSeconds = try measureSeconds {
                records = try reader.fetch(NSFetchRequest<BenchRecord>(entityName: "Record"))
            }
            let readSeconds = measureSeconds {
                for record in records { total &+= record.score }
            }
            return (fetchSeconds, readSeconds)
        }
        guard records.count == count, total == Int64(count) * Int64(count - 1) / 2 * 7 else {
            throw CocoaError(.coderValueNotFound, userInfo: [NSLocalizedDescriptionKey: "wrong fetch results"])
        }
        let n = Double(count)
        return [
            Measurement(label: "insert (create + set 6 values)", value: n / insertSeconds, unit: "objects/s"),
            Measurement(label: "save", value: n / saveSeconds, unit: "objects/s"),
            Measurement(label: "insert + save", value: n / (insertSeconds + saveSeconds), unit: "objects/s"),
            Measurement(label: "fetch all", value: n / fetchSeconds, unit: "objects/s"),
            Measurement(label: "read one attribute", value: n / readSeconds, unit: "objects/s"),
        ]
    }
}
