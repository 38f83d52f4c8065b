// A save's update that changes only a to-many derived from its inverse to-ones raises the
// row's version from the stored bytes (PageFileWriter+VersionOnly.swift) instead of
// decoding and encoding the row: the bytes it writes are the ones the general update step
// writes, the version check still refuses a stale row and reports it whole, and any other
// change takes the general step.
import Foundation
import StorageEngine
import Testing

@testable import OpenCoreData

@Suite struct VersionOnlyUpdateTests {
    typealias Stack = PageFileWriterTests.Stack

    /// A team with a title and a member naming it (Team.members is derived from Member.team).
    static func seeded(teamVersion: Int64) throws -> (stack: Stack, team: NSManagedObjectID) {
        let stack = try Stack()
        let (ada, crew) = (try stack.id("Member", 1), try stack.id("Team", 2))
        var team = stack.row(crew, ["title": .string("Crew")])
        team.version = teamVersion
        try stack.write { writer in
            _ = try writer.insert(team)
            _ = try writer.insert(stack.row(ada, ["name": .string("Ada"), "team": .objectID(crew)]))
        }
        return (stack, crew)
    }

    static func storedBytes(_ stack: Stack, _ objectID: NSManagedObjectID) throws -> [UInt8]? {
        try stack.store.openDatabase().read { transaction in
            try transaction.tree(named: "rows.\(objectID.entity.name ?? "")")?
                .value(forKey: PageFileKey.primary(objectID.key))
        }
    }

    static func slot(_ entity: NSEntityDescription, _ name: String) throws -> Int {
        try #require(entity.layout.slotsByName[name])
    }

    /// The update of `team`'s members a context sends (`.unresolved`: the store derives the
    /// list) or a list, at `expectedVersion`.
    static func membersUpdate(_ team: NSManagedObjectID, expectedVersion: Int64, value: StoreValue = .unresolved)
        throws -> StoreSaveRequest
    {
        var request = StoreSaveRequest()
        request.checksVersions = true
        request.updatedRows = [
            StoreRowUpdate(
                objectID: team, expectedVersion: expectedVersion,
                changes: [(try slot(team.entity, "members"), value)])
        ]
        return request
    }

    @Test(arguments: [Int64(1), 126, 127, 16_383])
    func writesTheBytesOfTheGeneralUpdate(version: Int64) throws {
        for value in [StoreValue.unresolved, .objectIDs([])] {
            let (fast, team) = try Self.seeded(teamVersion: version)
            let (general, generalTeam) = try Self.seeded(teamVersion: version)
            let request = try Self.membersUpdate(team, expectedVersion: version, value: value)
            let result = try fast.write { writer in try writer.save(request, tracksHistory: false) }
            let changes = request.updatedRows[0].changes
            let generalRow = try general.write { writer -> StoreRow in
                writer.updatesInPlace = true
                var row = try #require(
                    try writer.reader.row(team.entity, key: generalTeam.key, resolvingBlobs: false))
                #expect(try writer.update(&row, changes: changes) == nil)
                return row
            }
            #expect(result.versions[team] == version + 1)
            #expect(generalRow.version == version + 1)
            let bytes = try #require(try Self.storedBytes(fast, team))
            #expect(bytes == (try Self.storedBytes(general, generalTeam)))
            let stored = try #require(try fast.read(team))
            #expect(stored.version == version + 1)
            #expect(PageFileWriterTests.value(stored, "title") == .string("Crew"))
            #expect(PageFileWriterTests.destinations(PageFileWriterTests.value(stored, "members")) == [1])
            try fast.expectClean()
        }
    }

    @Test func aStaleVersionIsAConflictReportingTheWholeRow() throws {
        let (stack, team) = try Self.seeded(teamVersion: 3)
        let request = try Self.membersUpdate(team, expectedVersion: 2)
        let error = try #require(throws: NSError.self) {
            try stack.write { writer in try writer.save(request, tracksHistory: false) }
        }
        #expect(error.code == NSManagedObjectMergeError)
        let conflicts = try #require(error.userInfo[NSPersistentStoreSaveConflictsErrorKey] as? [StoreVersionConflict])
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.expectedVersion == 2)
        let persisted = try #require(conflicts.first?.persistedRow)
        #expect(persisted.version == 3)
        #expect(PageFileWriterTests.value(persisted, "title") == .string("Crew"))
        #expect(PageFileWriterTests.destinations(PageFileWriterTests.value(persisted, "members")) == [1])
        #expect(try stack.read(team)?.version == 3)
    }

    @Test func aMissingRowIsAConflictAndWritesNothing() throws {
        let (stack, _) = try Self.seeded(teamVersion: 1)
        let gone = try stack.id("Team", 9)
        let request = try Self.membersUpdate(gone, expectedVersion: 1)
        let error = try #require(throws: NSError.self) {
            try stack.write { writer in try writer.save(request, tracksHistory: false) }
        }
        #expect(error.code == NSManagedObjectMergeError)
        #expect(try Self.storedBytes(stack, gone) == nil)
    }

    @Test func onlyChangesOfDerivedListsTakeTheVersionOnlyStep() throws {
        let stack = try Stack()
        let (team, member, group) = (try stack.entity("Team"), try stack.entity("Member"), try stack.entity("Group"))
        let writer = try stack.write { writer in writer }
        func raisesOnly(_ entity: NSEntityDescription, _ changes: [(slot: Int, value: StoreValue)]) throws -> Bool {
            let update = StoreRowUpdate(
                objectID: try stack.id(entity.name ?? "", 1), expectedVersion: 1, changes: changes)
            return writer.raisesVersionOnly(update, info: try writer.catalog.info(for: entity))
        }
        #expect(try raisesOnly(team, [(try Self.slot(team, "members"), .unresolved)]))
        #expect(try raisesOnly(team, []))
        #expect(try !raisesOnly(team, [(try Self.slot(team, "title"), .string("New"))]))
        #expect(
            try !raisesOnly(
                team, [(try Self.slot(team, "members"), .unresolved), (try Self.slot(team, "title"), .null)]))
        // A many-to-many's list is in join trees: the general step writes its entries.
        #expect(try !raisesOnly(group, [(try Self.slot(group, "members"), .objectIDs([]))]))
        #expect(try !raisesOnly(member, [(try Self.slot(member, "groups"), .objectIDs([]))]))
        #expect(try !raisesOnly(member, [(try Self.slot(member, "team"), .null)]))
    }

    /// Through a context: a team whose only change is a new member rises one version per
    /// save, and a context holding it at an older version conflicts on its next change.
    @Test func aContextsSaveRaisesTheListOwnersVersion() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileWriterTests.model, url)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
        team.setValue("Crew", forKey: "title")
        try context.save()
        let other = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        other.persistentStoreCoordinator = coordinator
        let stale = try other.existingObject(with: team.objectID)
        #expect(stale.value(forKey: "title") as? String == "Crew")
        for (index, name) in ["Ada", "Grace"].enumerated() {
            let member = NSEntityDescription.insertNewObject(forEntityName: "Member", into: context)
            member.setValue(name, forKey: "name")
            member.setValue("\(name)@example.com", forKey: "email")
            member.setValue(team, forKey: "team")
            try context.save()
            let row = try #require(try coordinator.persistentStores.first.flatMap { try $0.row(for: team.objectID) })
            #expect(row.version == Int64(index + 2))
        }
        stale.setValue("Renamed", forKey: "title")
        #expect(throws: NSError.self) { try other.save() }
    }
}
