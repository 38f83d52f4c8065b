// A context holds a shelf with its books loaded; an upsert (a fresh object under the
// shelf's unique name, saved under a policy that merges constraint conflicts) gives the
// row's object ID to the fresh object. The context then moves a book to another shelf,
// saves, deletes the shelf (its delete cascades to its books) and saves: the moved book
// must survive, whichever object the context reaches the shelf through. (The soak's
// rollback writers lost an item so: an out-of-date list of a second object for the row
// was cascaded over.) A parent/child chain the same, with the upsert made by the parent's
// save of the child's insert, and with objects the child inserted (still under their
// temporary IDs there) reached again by a fetch after the parent's save.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct UpsertCascadeTests {
    typealias Fixtures = LinkedFixtures

    static let policies: [NSMergePolicyType] = [
        .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
        .overwriteMergePolicyType, .rollbackMergePolicyType,
    ]

    enum Move: String, CaseIterable, Sendable {
        /// `book.shelf = second`
        case toOne
        /// `second.books.insert(book, at: 0)`
        case list
    }

    /// Which object the context deletes the shelf through.
    enum Handle: String, CaseIterable, Sendable {
        /// the object it held before the upsert
        case earlier
        /// the object it inserted (the upsert)
        case fresh
        /// the object a fetch by name returns
        case fetched
    }

    private static func codes(_ context: NSManagedObjectContext) throws -> Set<String> {
        Set(
            try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Item")).map {
                $0.value(forKey: "code") as? String ?? "?"
            })
    }

    private static func move(_ book: NSManagedObject, to shelf: NSManagedObject, _ move: Move) {
        switch move {
        case .toOne: book.setValue(shelf, forKey: "shelf")
        case .list: shelf.mutableOrderedSetValue(forKey: "books").insert(book, at: 0)
        }
    }

    /// Live registered objects per row: more than one for a row is a second, out-of-date view of it.
    private static func shelvesNamed(_ name: String, in context: NSManagedObjectContext) -> Int {
        context.registeredObjects.count {
            $0.entity.name == "Shelf" && !$0.isFault && $0.value(forKey: "name") as? String == name
        }
    }

    private static func checkStore(
        _ coordinator: NSPersistentStoreCoordinator, _ label: String, movedTo second: String = "b"
    ) throws {
        let check = Fixtures.context(coordinator)
        let codes = try codes(check)
        #expect(codes.contains("x"), "\(label): the moved book is gone (\(codes.sorted()))")
        #expect(!codes.contains("y"), "\(label): the book left on the deleted shelf survived")
        let book = try Fixtures.fetch("Item", "x", in: check)
        #expect(
            (book?.value(forKey: "shelf") as? NSManagedObject)?.value(forKey: "name") as? String == second, "\(label)")
        #expect(try Fixtures.fetch("Shelf", "a", in: check) == nil, "\(label): the deleted shelf is back")
        #expect(try Fixtures.problems(coordinator) == [], "\(label)")
    }

    private static func setUp(_ coordinator: NSPersistentStoreCoordinator) throws {
        let setup = Fixtures.context(coordinator)
        let shelf = Fixtures.insert("Shelf", "a", into: setup)
        for code in ["x", "y"] {
            shelf.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", code, into: setup))
        }
        Fixtures.insert("Shelf", "b", into: setup)
        try setup.save()
    }

    /// A child (merging automatically) of a context on `coordinator` saving under
    /// `policy`, and a save of both.
    private static func chain(_ coordinator: NSPersistentStoreCoordinator, _ policy: NSMergePolicyType)
        -> (child: NSManagedObjectContext, save: () throws -> Void)
    {
        let parent = Fixtures.context(coordinator, policy)
        let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        child.parent = parent
        child.automaticallyMergesChangesFromParent = true
        return (
            child,
            {
                try child.performAndWait { try child.save() }
                try parent.performAndWait { try parent.save() }
            }
        )
    }

    @Test(arguments: LinkedFixtures.storeTypes, Move.allCases)
    func aBookMovedOffAnUpsertedShelfSurvivesItsDelete(_ storeType: String, _ move: Move) throws {
        for policy in Self.policies {
            for handle in Handle.allCases {
                let label = "\(storeType) \(move) \(policy.rawValue) via \(handle)"
                let coordinator = try Fixtures.coordinator(storeType)
                try Self.setUp(coordinator)
                let context = Fixtures.context(coordinator, policy)
                let earlier = try #require(try Fixtures.fetch("Shelf", "a", in: context))
                #expect(Fixtures.names(earlier.value(forKey: "books")) == ["x", "y"])
                let fresh = Fixtures.insert("Shelf", "a", into: context)
                try context.save()
                #expect(Self.shelvesNamed("a", in: context) <= 1, "\(label): two objects for one row")
                let book = try #require(try Fixtures.fetch("Item", "x", in: context))
                Self.move(book, to: try #require(try Fixtures.fetch("Shelf", "b", in: context)), move)
                try context.save()
                let shelf =
                    switch handle {
                    case .earlier: earlier
                    case .fresh: fresh
                    case .fetched: try #require(try Fixtures.fetch("Shelf", "a", in: context))
                    }
                context.delete(shelf)
                try context.save()
                try Self.checkStore(coordinator, label)
            }
        }
    }

    @Test(arguments: LinkedFixtures.storeTypes, Move.allCases)
    func aChildsBookMovedOffAShelfItsParentUpsertedSurvivesItsDelete(_ storeType: String, _ move: Move) throws {
        for policy in Self.policies {
            for handle in Handle.allCases {
                let label = "\(storeType) \(move) \(policy.rawValue) via \(handle)"
                let coordinator = try Fixtures.coordinator(storeType)
                try Self.setUp(coordinator)
                let (child, saveChain) = Self.chain(coordinator, policy)
                let (earlier, fresh) = try child.performAndWait {
                    let earlier = try #require(try Fixtures.fetch("Shelf", "a", in: child))
                    #expect(Fixtures.names(earlier.value(forKey: "books")) == ["x", "y"])
                    return (earlier, Fixtures.insert("Shelf", "a", into: child))
                }
                try saveChain()
                try child.performAndWait {
                    #expect(Self.shelvesNamed("a", in: child) <= 1, "\(label): two objects for one row")
                    let book = try #require(try Fixtures.fetch("Item", "x", in: child))
                    Self.move(book, to: try #require(try Fixtures.fetch("Shelf", "b", in: child)), move)
                }
                try saveChain()
                try child.performAndWait {
                    let shelf =
                        switch handle {
                        case .earlier: earlier
                        case .fresh: fresh
                        case .fetched: try #require(try Fixtures.fetch("Shelf", "a", in: child))
                        }
                    child.delete(shelf)
                }
                try saveChain()
                try Self.checkStore(coordinator, label)
            }
        }
    }

    /// No upsert: the child inserts a shelf with a book, the chain saves, and the child
    /// reaches the book again by a fetch (the parent's save gave it its permanent ID), moves
    /// it away and deletes the shelf.
    @Test(arguments: LinkedFixtures.storeTypes, Move.allCases)
    func aChildsBookInsertedThenFetchedAgainSurvivesItsShelfsDelete(_ storeType: String, _ move: Move) throws {
        for policy in Fixtures.policies {
            for handle in [Handle.fresh, .fetched] {
                let label = "\(storeType) \(move) \(policy.rawValue) via \(handle)"
                let coordinator = try Fixtures.coordinator(storeType)
                let setup = Fixtures.context(coordinator)
                Fixtures.insert("Shelf", "b", into: setup)
                try setup.save()
                let (child, saveChain) = Self.chain(coordinator, policy)
                let fresh = child.performAndWait {
                    let shelf = Fixtures.insert("Shelf", "a", into: child)
                    for code in ["x", "y"] {
                        shelf.mutableOrderedSetValue(forKey: "books").add(Fixtures.insert("Item", code, into: child))
                    }
                    return shelf
                }
                let temporary = child.performAndWait { fresh.objectID }
                try saveChain()
                try child.performAndWait {
                    // The child's objects took the IDs the parent's save gave their rows.
                    #expect(!fresh.objectID.isTemporaryID, "\(label)")
                    #expect(child.object(with: temporary) === fresh, "\(label): an ID kept from before")
                    let book = try #require(try Fixtures.fetch("Item", "x", in: child))
                    Self.move(book, to: try #require(try Fixtures.fetch("Shelf", "b", in: child)), move)
                }
                try saveChain()
                try child.performAndWait {
                    #expect(Self.shelvesNamed("a", in: child) <= 1, "\(label): two objects for one row")
                    let shelf = handle == .fresh ? fresh : try #require(try Fixtures.fetch("Shelf", "a", in: child))
                    child.delete(shelf)
                }
                try saveChain()
                try Self.checkStore(coordinator, label)
            }
        }
    }
}
