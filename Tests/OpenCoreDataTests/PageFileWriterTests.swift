// The default store's writer step by step (PageFileWriter.swift): a row written through
// it reads back whole; after each step the index, unique, reference, join and blob trees
// hold exactly what the row needs, and verify() finds the store clean; a unique clash
// writes nothing; an index entry added and taken back in one transaction never reaches
// its tree.
import Foundation
import StorageEngine
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct PageFileWriterTests {
    /// Member: name (indexed), email (unique), photo (external storage), team (to-one,
    /// inverse kept through a reference index), groups (many-to-many, join trees).
    static let model: NSManagedObjectModel = {
        let (member, team, group) = (NSEntityDescription(), NSEntityDescription(), NSEntityDescription())
        (member.name, team.name, group.name) = ("Member", "Team", "Group")
        let photo = PageFileFixtures.attribute("photo", .binaryDataAttributeType)
        photo.allowsExternalBinaryDataStorage = true
        let toTeam = TestStack.relationship("team", to: team, toMany: false)
        let members = TestStack.relationship("members", to: member, toMany: true)
        TestStack.pair(toTeam, members)
        let groups = TestStack.relationship("groups", to: group, toMany: true)
        let groupMembers = TestStack.relationship("members", to: member, toMany: true)
        TestStack.pair(groups, groupMembers)
        member.properties = [
            PageFileFixtures.attribute("name", .stringAttributeType, indexed: true),
            PageFileFixtures.attribute("email", .stringAttributeType), photo, toTeam, groups,
        ]
        member.uniquenessConstraints = [["email"]]
        team.properties = [PageFileFixtures.attribute("title", .stringAttributeType), members]
        group.properties = [PageFileFixtures.attribute("label", .stringAttributeType), groupMembers]
        let model = NSManagedObjectModel()
        model.entities = [member, team, group]
        return model
    }()

    /// An open store of `model` and helpers over its internals.
    struct Stack {
        let coordinator: NSPersistentStoreCoordinator
        let store: PageFileStore

        init() throws {
            let url = try PageFileFixtures.temporaryURL()
            coordinator = try PageFileFixtures.coordinator(PageFileWriterTests.model, url)
            guard let store = coordinator.persistentStores.first as? PageFileStore else {
                throw NSError(domain: NSCocoaErrorDomain, code: NSCoreDataError)
            }
            self.store = store
        }

        func entity(_ name: String) throws -> NSEntityDescription {
            try #require(PageFileWriterTests.model.entitiesByName[name])
        }

        func id(_ entity: String, _ key: Int64) throws -> NSManagedObjectID {
            store.newObjectID(for: try self.entity(entity), key: key)
        }

        /// A new row: `values` by property name, nil elsewhere, no destinations for to-manys.
        func row(_ objectID: NSManagedObjectID, _ values: [String: StoreValue]) -> StoreRow {
            let layout = objectID.entity.layout
            var slots = layout.properties.map { property -> StoreValue in
                (property as? NSRelationshipDescription)?.isToMany == true ? .objectIDs([]) : .null
            }
            for (name, value) in values {
                if let slot = layout.slotsByName[name] { slots[slot] = value }
            }
            return StoreRow(objectID: objectID, version: 1, values: slots)
        }

        /// Runs `steps` in one write transaction, then `finish()`.
        func write<Result>(_ steps: (inout PageFileWriter) throws -> Result) throws -> Result {
            let (catalog, codec) = (store.catalog, store.codec)
            return try store.openDatabase().write { transaction in
                var writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
                let result = try steps(&writer)
                try writer.finish()
                return result
            }
        }

        /// The stored row of `objectID` whole (blobs and to-manys resolved).
        func read(_ objectID: NSManagedObjectID) throws -> StoreRow? {
            let (catalog, codec) = (store.catalog, store.codec)
            return try store.openDatabase().read { transaction in
                try PageFileRowReader(transaction: transaction, catalog: catalog, codec: codec)
                    .completeRow(objectID.entity, key: objectID.key)
            }
        }

        func keys(_ tree: String) throws -> [[UInt8]] { try store.treeKeys(tree) }

        func expectClean(_ comment: Comment? = nil) throws {
            let report = try store.verify()
            #expect(report.isClean, "\(report.problems) \(comment ?? "")")
        }
    }

    static func value(_ row: StoreRow?, _ name: String) -> StoreValue? {
        guard let row, let slot = row.objectID.entity.layout.slotsByName[name] else { return nil }
        return row.values[slot]
    }

    /// The unordered destinations of a to-many value, by key.
    static func destinations(_ value: StoreValue?) -> [Int64] {
        guard case .objectIDs(let ids) = value else { return [] }
        return ids.map(\.key).sorted()
    }

    @Test func anInsertedRowReadsBackWithEveryEntryItNeeds() throws {
        let stack = try Stack()
        let (ada, crew, chess) = (try stack.id("Member", 1), try stack.id("Team", 2), try stack.id("Group", 3))
        let photo = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let member = stack.row(
            ada,
            [
                "name": .string("Ada"), "email": .string("ada@example.com"), "photo": .binary(photo),
                "team": .objectID(crew), "groups": .objectIDs([chess]),
            ])
        let clashes = try stack.write { writer in
            [
                try writer.insert(member), try writer.insert(stack.row(crew, ["title": .string("Crew")])),
                try writer.insert(stack.row(chess, ["label": .string("Chess"), "members": .objectIDs([ada])])),
            ]
        }
        #expect(clashes.allSatisfy { $0 == nil })

        let stored = try #require(try stack.read(ada))
        #expect(stored.version == 1)
        #expect(Self.value(stored, "name") == .string("Ada"))
        #expect(Self.value(stored, "photo") == .binary(photo))
        #expect(Self.value(stored, "team") == .objectID(crew))
        #expect(Self.destinations(Self.value(stored, "groups")) == [3])
        #expect(Self.destinations(Self.value(try stack.read(crew), "members")) == [1])
        #expect(Self.destinations(Self.value(try stack.read(chess), "members")) == [1])
        #expect(try stack.keys("index.Member.name").count == 1)
        #expect(try stack.keys("unique.Member.email").count == 1)
        #expect(try stack.keys("rel.Member.team").count == 1)
        #expect(try stack.keys("join.Member.groups").count == 1)
        #expect(try stack.keys("join.Group.members").count == 1)
        #expect(try stack.keys("blobs").count == 2)  // header and one chunk
        try stack.expectClean()
    }

    @Test func anUpdateReplacesOnlyWhatItsChangesReplace() throws {
        let stack = try Stack()
        let ada = try stack.id("Member", 1)
        let (crew, other) = (try stack.id("Team", 2), try stack.id("Team", 3))
        let (chess, go) = (try stack.id("Group", 4), try stack.id("Group", 5))
        let photo = Data(repeating: 9, count: 70_000)
        try stack.write { writer in
            _ = try writer.insert(
                stack.row(
                    ada,
                    [
                        "name": .string("Ada"), "email": .string("ada@example.com"), "photo": .binary(photo),
                        "team": .objectID(crew), "groups": .objectIDs([chess]),
                    ]))
            _ = try writer.insert(stack.row(crew, ["title": .string("Crew")]))
            _ = try writer.insert(stack.row(other, ["title": .string("Other")]))
            _ = try writer.insert(stack.row(chess, ["label": .string("Chess"), "members": .objectIDs([ada])]))
            _ = try writer.insert(stack.row(go, ["label": .string("Go")]))
        }
        let nameKeys = try stack.keys("index.Member.name")
        let referenceKeys = try stack.keys("rel.Member.team")

        // The name, the team, the groups and the photo change; the email stays.
        var row = try #require(try stack.read(ada))
        let layout = ada.entity.layout
        let changes: [(slot: Int, value: StoreValue)] = try [
            ("name", StoreValue.string("Ada Lovelace")), ("team", .objectID(other)), ("groups", .objectIDs([go])),
            ("photo", .binary(Data([1, 2, 3]))), ("email", .unresolved),
        ].map { (try #require(layout.slotsByName[$0.0]), $0.1) }
        let clash = try stack.write { writer -> PageFileUniqueClash? in
            var stored = try #require(try writer.reader.row(ada.entity, key: ada.key, resolvingBlobs: false))
            let clash = try writer.update(&stored, changes: changes)
            // The other side of the many-to-many, as a context's save writes it.
            let members = try #require(chess.entity.layout.slotsByName["members"])
            var chessRow = try #require(try writer.reader.row(chess.entity, key: chess.key))
            _ = try writer.update(&chessRow, changes: [(members, .objectIDs([]))])
            var goRow = try #require(try writer.reader.row(go.entity, key: go.key))
            _ = try writer.update(&goRow, changes: [(members, .objectIDs([ada]))])
            row = stored
            return clash
        }
        #expect(clash == nil)
        #expect(row.version == 2)
        let stored = try #require(try stack.read(ada))
        #expect(stored.version == 2)
        #expect(Self.value(stored, "name") == .string("Ada Lovelace"))
        #expect(Self.value(stored, "email") == .string("ada@example.com"))
        #expect(Self.value(stored, "photo") == .binary(Data([1, 2, 3])))
        #expect(Self.value(stored, "team") == .objectID(other))
        #expect(Self.destinations(Self.value(stored, "groups")) == [5])
        let newNameKeys = try stack.keys("index.Member.name")
        #expect(newNameKeys.count == 1 && newNameKeys != nameKeys)
        let newReferenceKeys = try stack.keys("rel.Member.team")
        #expect(newReferenceKeys.count == 1 && newReferenceKeys != referenceKeys)
        #expect(try stack.keys("unique.Member.email").count == 1)
        #expect(try stack.keys("blobs").isEmpty)
        #expect(Self.destinations(Self.value(try stack.read(crew), "members")).isEmpty)
        #expect(Self.destinations(Self.value(try stack.read(other), "members")) == [1])
        try stack.expectClean()
    }

    @Test func aDeleteRemovesTheRowAndEverythingHangingOffIt() throws {
        let stack = try Stack()
        let (ada, grace) = (try stack.id("Member", 1), try stack.id("Member", 2))
        let chess = try stack.id("Group", 3)
        try stack.write { writer in
            for (id, name) in [(ada, "Ada"), (grace, "Grace")] {
                _ = try writer.insert(
                    stack.row(
                        id,
                        [
                            "name": .string(name), "email": .string("\(name)@example.com"),
                            "photo": .binary(Data(repeating: 1, count: 80_000)), "groups": .objectIDs([chess]),
                        ]))
            }
            _ = try writer.insert(stack.row(chess, ["label": .string("Chess"), "members": .objectIDs([ada, grace])]))
        }
        try stack.write { writer in
            let stored = try #require(try writer.reader.row(ada.entity, key: ada.key, resolvingBlobs: false))
            try writer.delete(stored)
            let members = try #require(chess.entity.layout.slotsByName["members"])
            var group = try #require(try writer.reader.row(chess.entity, key: chess.key))
            _ = try writer.update(&group, changes: [(members, .objectIDs([grace]))])
        }
        #expect(try stack.read(ada) == nil)
        #expect(try stack.read(grace) != nil)
        #expect(try stack.keys("rows.Member").count == 1)
        #expect(try stack.keys("index.Member.name").count == 1)
        #expect(try stack.keys("unique.Member.email").count == 1)
        #expect(try stack.keys("join.Member.groups").count == 1)
        #expect(try stack.keys("blobs").count == 2)
        #expect(Self.destinations(Self.value(try stack.read(chess), "members")) == [2])
        try stack.expectClean()
    }

    @Test func aUniqueClashWritesNothingOfItsRow() throws {
        let stack = try Stack()
        let (ada, grace, impostor) = (try stack.id("Member", 1), try stack.id("Member", 2), try stack.id("Member", 3))
        try stack.write { writer in
            _ = try writer.insert(stack.row(ada, ["name": .string("Ada"), "email": .string("zo\u{EB}@example.com")]))
            _ = try writer.insert(stack.row(grace, ["name": .string("Grace"), "email": .string("grace@example.com")]))
        }
        let emailSlot = try #require(ada.entity.layout.slotsByName["email"])
        let nameSlot = try #require(ada.entity.layout.slotsByName["name"])
        let (inserted, updated) = try stack.write { writer -> (PageFileUniqueClash?, PageFileUniqueClash?) in
            // The same address in another normalization form is the same key.
            let inserted = try writer.insert(
                stack.row(impostor, ["name": .string("Eve"), "email": .string("zoe\u{308}@example.com")]))
            var stored = try #require(try writer.reader.row(grace.entity, key: grace.key))
            let updated = try writer.update(
                &stored, changes: [(nameSlot, .string("Grace H.")), (emailSlot, .string("zo\u{EB}@example.com"))])
            return (inserted, updated)
        }
        #expect(inserted?.owner == 1)
        #expect(inserted?.index.name == "email")
        #expect(updated?.owner == 1)
        #expect(updated.flatMap { Self.value($0.row, "name") } == .string("Grace H."))
        #expect(try stack.read(impostor) == nil)
        let grace2 = try #require(try stack.read(grace))
        #expect(grace2.version == 1)
        #expect(Self.value(grace2, "name") == .string("Grace"))
        #expect(try stack.keys("index.Member.name").count == 2)
        #expect(try stack.keys("unique.Member.email").count == 2)
        try stack.expectClean()
    }

    @Test func entriesAddedAndTakenBackInOneTransactionNeverReachTheirTrees() throws {
        let stack = try Stack()
        let ids = try (1...50).map { try stack.id("Member", Int64($0)) }
        try stack.write { writer in
            for (number, id) in ids.enumerated() {
                _ = try writer.insert(
                    stack.row(id, ["name": .string("M\(99 - number)"), "email": .string("m\(number)@example.com")]))
            }
            for id in ids where id.key % 2 == 0 {
                try writer.delete(try #require(try writer.reader.row(id.entity, key: id.key)))
            }
        }
        let names = try stack.keys("index.Member.name")
        #expect(names.count == 25)
        #expect(names == names.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(try stack.keys("unique.Member.email").count == 25)
        try stack.expectClean()
    }

    @Test func recordHistoryAppendsTheNextSequence() throws {
        let stack = try Stack()
        let ada = try stack.id("Member", 1)
        for _ in 0..<3 {
            try stack.write { writer in
                let record = PersistentHistoryRecord(
                    timestamp: Date(timeIntervalSince1970: 1), author: "writer", contextName: nil,
                    changes: [.insert(ada)])
                try writer.recordHistory(record)
            }
        }
        let records = try stack.store.historyRecords(after: 0)
        #expect(records.map(\.sequence) == [1, 2, 3])
        #expect(try stack.store.currentHistorySequence() == 3)
    }

    @Test func rowsWrittenByTheWriterAreObjectsToAContext() throws {
        let stack = try Stack()
        let ids = try stack.store.obtainPermanentIDs(for: [try stack.entity("Member"), try stack.entity("Team")])
        try stack.write { writer in
            _ = try writer.insert(
                stack.row(ids[0], ["name": .string("Ada"), "email": .string("ada@x"), "team": .objectID(ids[1])]))
            _ = try writer.insert(stack.row(ids[1], ["title": .string("Crew")]))
        }
        let context = PageFileFixtures.context(stack.coordinator)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Member")
        request.predicate = NSPredicate(format: "name == %@", "Ada")
        let member = try #require(try context.fetch(request).first)
        #expect(member.objectID == ids[0])
        let team = try #require(member.value(forKey: "team") as? NSManagedObject)
        #expect(team.value(forKey: "title") as? String == "Crew")
        #expect((team.value(forKey: "members") as? Set<NSManagedObject>)?.count == 1)
    }
}
