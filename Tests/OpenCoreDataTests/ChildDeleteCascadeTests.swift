// A child context moves a book to another shelf and deletes its old shelf (whose delete
// cascades to its books) in one save: the parent runs the delete rules again when it takes
// the save, and must run them over the shelf's list as the child left it, not its own
// older one still naming the moved book. (The soak's rollback chain lost an item this
// way; the conflict and the rollback policy were bystanders: it happens under every
// policy, with or without a conflict.)
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct ChildDeleteCascadeTests {
    typealias Fixtures = LinkedFixtures

    enum Move: String, CaseIterable, Sendable {
        /// `book.shelf = second`
        case toOne
        /// `second.books.insert(book, at: 0)`
        case list
        /// `book.shelf = second` with the old shelf a fault in the child (its list never read)
        case toOneUnloadedSource
    }

    private static func codes(_ context: NSManagedObjectContext) throws -> Set<String> {
        Set(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).map {
                $0.value(forKey: "code") as? String ?? "?"
            })
    }

    @Test(arguments: Fixtures.storeTypes, Move.allCases)
    func aBookMovedBeforeItsShelfIsDeletedSurvivesTheParentsSave(_ storeType: String, _ move: Move) throws {
        for policy in [NSMergePolicyType.errorMergePolicyType, .rollbackMergePolicyType] {
            for conflict in [false, true] where policy == .rollbackMergePolicyType || !conflict {
                let coordinator = try Fixtures.coordinator(storeType)
                let parent = Fixtures.context(coordinator, policy)
                let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
                child.parent = parent
                try child.performAndWait {
                    let first = Fixtures.insert("Shelf", "s1", into: child)
                    Fixtures.insert("Shelf", "s2", into: child)
                    for code in ["x", "y"] {
                        first.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", code, into: child))
                    }
                    try child.save()
                }
                try parent.performAndWait { try parent.save() }
                if move == .toOneUnloadedSource { child.performAndWait { child.reset() } }
                if conflict {
                    // Another context changes s1: under rollback the parent's delete of it is undone.
                    let other = Fixtures.context(coordinator)
                    try other.performAndWait {
                        let otherFirst = try #require(try Fixtures.fetch("Shelf", "s1", in: other))
                        otherFirst.mutableOrderedSetValue(forKey: "books").add(
                            Fixtures.insert("Item", "z", into: other))
                        try other.save()
                    }
                }
                try child.performAndWait {
                    let book = try #require(try Fixtures.fetch("Item", "x", in: child))
                    let second = try #require(try Fixtures.fetch("Shelf", "s2", in: child))
                    switch move {
                    case .toOne, .toOneUnloadedSource: book.setValue(second, forKey: "shelf")
                    case .list: second.mutableOrderedSetValue(forKey: "books").insert(book, at: 0)
                    }
                    let first = try #require(try Fixtures.fetch("Shelf", "s1", in: child))
                    child.delete(first)
                    try child.save()
                }
                try parent.performAndWait { try parent.save() }
                let check = Fixtures.context(coordinator)
                try check.performAndWait {
                    let label = "\(storeType) \(move) \(policy.rawValue) conflict \(conflict)"
                    let codes = try Self.codes(check)
                    #expect(codes.contains("x"), "\(label): the moved book is gone (\(codes.sorted()))")
                    #expect(!codes.contains("y"), "\(label): the book left on the deleted shelf survived")
                    let book = try Fixtures.fetch("Item", "x", in: check)
                    #expect(
                        (book?.value(forKey: "shelf") as? NSManagedObject)?.value(forKey: "name") as? String == "s2",
                        "\(label)")
                    let second = try #require(try Fixtures.fetch("Shelf", "s2", in: check))
                    #expect(Fixtures.names(second.value(forKey: "books")) == ["x"], "\(label)")
                    // Under rollback the conflict keeps s1 (the other context's z on it); without one it is gone.
                    let first = try Fixtures.fetch("Shelf", "s1", in: check)
                    #expect((first != nil) == conflict, "\(label)")
                    if let first { #expect(Fixtures.names(first.value(forKey: "books")) == ["z"], "\(label)") }
                }
                if let store = coordinator.persistentStores.first as? PageFileStore {
                    #expect(try store.verify().problems.isEmpty)
                }
            }
        }
    }
}
