// Strings in composed and decomposed forms sort the same way in the context (unsaved
// objects, NSSortDescriptor's `compare:` on Swift strings: canonical equivalence, NFC
// order) and in every store's fetch, through an index and without one: "e\u{301}" sorts
// as "é", after "f", not by its first byte before it.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct StringSortNormalizationTests {
    static let model: NSManagedObjectModel = {
        let word = NSEntityDescription()
        word.name = "Word"
        word.properties = [
            TestStack.attribute("indexed", .stringAttributeType, indexed: true),
            TestStack.attribute("plain", .stringAttributeType),
        ]
        let model = NSManagedObjectModel()
        model.entities = [word]
        return model
    }()

    /// Pairs of canonically equivalent forms (decomposed, composed) and plain letters around them.
    static let stored = ["e\u{301}", "f", "\u{C5}ngstr\u{F6}m", "A\u{30A}b", "e", "z", "o\u{308}", "\u{1E69}"]
    static let unsaved = ["\u{E9}a", "e\u{301}b", "s\u{323}\u{307}", "A\u{30A}ngstro\u{308}m", "ez", "\u{F6}"]

    private static func isInOrder(_ strings: [String]) -> Bool {
        zip(strings, strings.dropFirst()).allSatisfy { !($1 < $0) }
    }

    @Test(arguments: TestStack.storeTypes, ["indexed", "plain"])
    func storesAndTheContextSortDecomposedStringsAlike(_ storeType: String, _ key: String) throws {
        let directory = try TestStack.scratchDirectory("nfc-sort")
        defer { try? FileManager.default.removeItem(at: directory) }
        let coordinator = try TestStack.coordinator(storeType, model: Self.model, in: directory)
        let context = TestStack.context(coordinator)
        try context.performAndWait {
            for text in Self.stored {
                let word = NSEntityDescription.insertNewObject(forEntityName: "Word", into: context)
                word.setValue(text, forKey: "indexed")
                word.setValue(text, forKey: "plain")
            }
            try context.save()
            let request = NSFetchRequest<NSManagedObject>(entityName: "Word")
            request.sortDescriptors = [NSSortDescriptor(key: key, ascending: true)]
            let fromStore = try context.fetch(request).compactMap { $0.value(forKey: key) as? String }
            #expect(fromStore.count == Self.stored.count)
            #expect(Self.isInOrder(fromStore), "\(storeType) \(key): \(fromStore.map(\.unicodeScalars.count))")
            // The exact strings come back: the store orders by a normal form, it does not store one.
            #expect(
                fromStore.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
                    == Self.stored.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
            for text in Self.unsaved {
                let word = NSEntityDescription.insertNewObject(forEntityName: "Word", into: context)
                word.setValue(text, forKey: "indexed")
                word.setValue(text, forKey: "plain")
            }
            let merged = try context.fetch(request).compactMap { $0.value(forKey: key) as? String }
            #expect(merged.count == Self.stored.count + Self.unsaved.count)
            #expect(Self.isInOrder(merged), "\(storeType) \(key) with unsaved objects")
            request.sortDescriptors = [NSSortDescriptor(key: key, ascending: false)]
            let descending = try context.fetch(request).compactMap { $0.value(forKey: key) as? String }
            #expect(Self.isInOrder(descending.reversed()), "\(storeType) \(key) descending")
        }
    }
}
