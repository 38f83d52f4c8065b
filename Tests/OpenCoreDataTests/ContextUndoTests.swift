import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

/// A context's undo manager: what Stage4's undo part asserts, on every store, and a
/// differential test against replaying the edits that survive undo and redo.
@Suite struct ContextUndoTests {
    static let storeTypes = [NSInMemoryStoreType, NSSQLiteStoreType, NSBinaryStoreType]

    /// A context on a fresh store of `storeType` with the people model.
    static func makeContext(_ storeType: String) throws -> NSManagedObjectContext {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = try PageFileFixtures.coordinator(PageFileFixtures.peopleModel, url, type: storeType)
        return PageFileFixtures.context(coordinator)
    }

    static func team(_ title: String, _ context: NSManagedObjectContext) -> NSManagedObject {
        let team = NSEntityDescription.insertNewObject(forEntityName: "Team", into: context)
        team.setValue(title, forKey: "title")
        return team
    }

    static func members(_ team: NSManagedObject) -> Set<NSManagedObject> {
        team.value(forKey: "members") as? Set<NSManagedObject> ?? []
    }

    @Test func aContextHasNoUndoManagerAndRecordsNothingWithoutOne() throws {
        let context = try Self.makeContext(NSInMemoryStoreType)
        #expect(context.undoManager == nil)
        let person = PageFileFixtures.person(context, "Plain", "NoUndo", 20, nil)
        context.processPendingChanges()
        context.undo()
        context.redo()
        #expect(context.insertedObjects.contains(person) && person.value(forKey: "firstName") as? String == "Plain")
    }

    @Test(arguments: storeTypes) func undoAndRedoEachKindOfChange(storeType: String) throws {
        let context = try Self.makeContext(storeType)
        let acme = Self.team("Acme", context)
        let globex = Self.team("Globex", context)
        let worker = PageFileFixtures.person(context, "Worker", "Undo", 25, "w@x")
        worker.setValue(acme, forKey: "team")
        let ann = PageFileFixtures.person(context, "Ann", "Undo", 30, nil)
        let bob = PageFileFixtures.person(context, "Bob", "Undo", 50, "bob@x")
        try context.save()

        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        #expect(context.undoManager === undoManager)
        func group(_ body: () -> Void) {
            undoManager.beginUndoGrouping()
            body()
            context.processPendingChanges()
            undoManager.endUndoGrouping()
        }

        // Insert: undo takes it out of the context (and out of fetches), redo puts it back.
        var inserted: NSManagedObject?
        group { inserted = PageFileFixtures.person(context, "Undone", "Undo", 1, nil) }
        #expect(undoManager.canUndo)
        context.undo()
        let undone = try #require(inserted)
        #expect(!context.insertedObjects.contains(undone) && !context.hasChanges)
        let byName = NSFetchRequest<NSManagedObject>(entityName: "Person")
        byName.predicate = NSPredicate(format: "firstName == %@", "Undone")
        #expect(try context.fetch(byName).isEmpty)
        #expect(undoManager.canRedo)
        context.redo()
        #expect(context.insertedObjects.contains(undone) && undone.value(forKey: "firstName") as? String == "Undone")
        #expect(try context.fetch(byName) == [undone])
        context.undo()

        // Attribute
        group { ann.setValue(Int16(40), forKey: "age") }
        context.undo()
        #expect(ann.value(forKey: "age") as? Int16 == 30 && !context.hasChanges)
        context.redo()
        #expect(ann.value(forKey: "age") as? Int16 == 40 && ann.hasChanges)
        context.undo()

        // Delete of a stored object
        group { context.delete(bob) }
        #expect(bob.isDeleted)
        context.undo()
        #expect(
            !bob.isDeleted && !context.deletedObjects.contains(bob)
                && bob.value(forKey: "firstName") as? String == "Bob")
        context.redo()
        #expect(bob.isDeleted)
        context.undo()

        // Relationship and its inverse
        group { worker.setValue(globex, forKey: "team") }
        #expect(Self.members(globex).contains(worker) && !Self.members(acme).contains(worker))
        context.undo()
        #expect(worker.value(forKey: "team") as? NSManagedObject === acme)
        #expect(Self.members(acme).contains(worker) && !Self.members(globex).contains(worker))
        context.redo()
        #expect(worker.value(forKey: "team") as? NSManagedObject === globex && Self.members(globex).contains(worker))
        context.undo()

        // Delete with a nullified inverse: undo restores both sides.
        group { context.delete(acme) }
        #expect(worker.value(forKey: "team") == nil)
        context.undo()
        #expect(!acme.isDeleted && worker.value(forKey: "team") as? NSManagedObject === acme)
        #expect(Self.members(acme) == [worker])
        #expect(!context.hasChanges)

        // One group, several changes; changes of one value coalesce.
        group {
            ann.setValue("Grouped", forKey: "lastName")
            ann.setValue("ann@x", forKey: "email")
            ann.setValue(Int16(41), forKey: "age")
            ann.setValue(Int16(42), forKey: "age")
        }
        context.undo()
        #expect(ann.value(forKey: "lastName") as? String == "Undo" && ann.value(forKey: "email") == nil)
        #expect(ann.value(forKey: "age") as? Int16 == 30)

        // Registration disabled: the change is never undone.
        context.processPendingChanges()
        undoManager.disableUndoRegistration()
        ann.setValue("silent@x", forKey: "email")
        context.processPendingChanges()
        undoManager.enableUndoRegistration()
        group { ann.setValue(Int16(60), forKey: "age") }
        context.undo()
        #expect(ann.value(forKey: "age") as? Int16 == 30 && ann.value(forKey: "email") as? String == "silent@x")

        // Save keeps the stack: undoing a saved change leaves a change to save.
        try context.save()
        group { ann.setValue(Int16(33), forKey: "age") }
        try context.save()
        #expect(!context.hasChanges)
        context.undo()
        #expect(ann.value(forKey: "age") as? Int16 == 30 && context.hasChanges)
        try context.save()

        // Undoing a saved delete brings the object back as an insert, saved again.
        group { context.delete(bob) }
        try context.save()
        #expect(bob.managedObjectContext == nil)
        context.undo()
        #expect(bob.managedObjectContext === context && context.insertedObjects.contains(bob))
        try context.save()
        let bobs = NSFetchRequest<NSManagedObject>(entityName: "Person")
        bobs.predicate = NSPredicate(format: "email == %@", "bob@x")
        #expect(try context.count(for: bobs) == 1)

        // rollback() empties the stack.
        group { ann.setValue(Int16(70), forKey: "age") }
        #expect(undoManager.canUndo)
        context.rollback()
        #expect(!undoManager.canUndo && !undoManager.canRedo)
        #expect(ann.value(forKey: "age") as? Int16 == 30 && !context.hasChanges)

        // reset() too.
        group { ann.setValue(Int16(71), forKey: "age") }
        context.reset()
        #expect(!undoManager.canUndo)
        context.undoManager = nil
        #expect(context.undoManager == nil)
    }

    @Test func undoPostsObjectsDidChange() throws {
        let context = try Self.makeContext(NSInMemoryStoreType)
        let ann = PageFileFixtures.person(context, "Ann", "Undo", 30, nil)
        try context.save()
        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        undoManager.beginUndoGrouping()
        ann.setValue(Int16(40), forKey: "age")
        undoManager.endUndoGrouping()  // the checkpoint processes the pending change
        #expect(undoManager.canUndo)
        nonisolated(unsafe) var updated: [Set<NSManagedObject>] = []
        let observer = NotificationCenter.default.addObserver(
            forName: .NSManagedObjectContextObjectsDidChange, object: context, queue: nil
        ) { note in
            updated.append(note.userInfo?[NSUpdatedObjectsKey] as? Set<NSManagedObject> ?? [])
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        context.undo()
        #expect(updated == [[ann]])
        #expect(ann.value(forKey: "age") as? Int16 == 30)
    }

    @Test func groupsByEventRegistersAtUndo() throws {
        let context = try Self.makeContext(NSInMemoryStoreType)
        let ann = PageFileFixtures.person(context, "Ann", "Undo", 30, nil)
        try context.save()
        context.undoManager = UndoManager()
        ann.setValue(Int16(40), forKey: "age")
        // No run loop ran: undo() processes the change into the open event group and undoes it.
        context.undo()
        #expect(ann.value(forKey: "age") as? Int16 == 30 && !context.hasChanges)
        context.redo()
        #expect(ann.value(forKey: "age") as? Int16 == 40)
    }

    // MARK: Differential: undo/redo against replaying the surviving edits

    enum Edit {
        case insert(label: String, age: Int16)
        case age(label: String, Int16)
        case rename(label: String, String)
        case join(label: String, team: String?)
        case delete(label: String)
        case insertTeam(String)
        case deleteTeam(String)
    }

    static func find(_ entity: String, _ key: String, _ value: String, in context: NSManagedObjectContext)
        throws -> NSManagedObject?
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = NSPredicate(format: "%K == %@", key, value)
        return try context.fetch(request).first
    }

    static func apply(_ edit: Edit, to context: NSManagedObjectContext) throws {
        switch edit {
        case .insert(let label, let age): PageFileFixtures.person(context, label, "L", age, "\(label)@x")
        case .age(let label, let age): try find("Person", "firstName", label, in: context)?.setValue(age, forKey: "age")
        case .rename(let label, let name):
            try find("Person", "firstName", label, in: context)?.setValue(name, forKey: "lastName")
        case .join(let label, let title):
            let team = try title.flatMap { try find("Team", "title", $0, in: context) }
            try find("Person", "firstName", label, in: context)?.setValue(team, forKey: "team")
        case .delete(let label):
            if let person = try find("Person", "firstName", label, in: context) { context.delete(person) }
        case .insertTeam(let title): _ = team(title, context)
        case .deleteTeam(let title):
            if let team = try find("Team", "title", title, in: context) { context.delete(team) }
        }
    }

    /// Everything the context sees, as sorted lines.
    static func state(_ context: NSManagedObjectContext) throws -> [String] {
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person")).map { person in
            let team = (person.value(forKey: "team") as? NSManagedObject)?.value(forKey: "title") as? String
            return "P \(person.value(forKey: "firstName") ?? "-") \(person.value(forKey: "lastName") ?? "-") "
                + "\(person.value(forKey: "age") ?? "-") \(person.value(forKey: "email") ?? "-") \(team ?? "-")"
        }
        let teams = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team")).map { team in
            let names = members(team).compactMap { $0.value(forKey: "firstName") as? String }.sorted()
            return "T \(team.value(forKey: "title") ?? "-") [\(names.joined(separator: ","))]"
        }
        return (people + teams).sorted()
    }

    /// A random edit applicable to what `context` holds now.
    static func randomEdit(_ random: inout SeededRandom, _ context: NSManagedObjectContext, counter: inout Int)
        throws -> Edit
    {
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            .compactMap { $0.value(forKey: "firstName") as? String }.sorted()
        let teams = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Team"))
            .compactMap { $0.value(forKey: "title") as? String }.sorted()
        counter += 1
        let choice = random.int(in: 0...9)
        if people.isEmpty || choice < 2 { return .insert(label: "P\(counter)", age: Int16(random.int(in: 1...99))) }
        // Every edit changes something, so each registers an undo group.
        let person = random.pick(people)
        let object = try find("Person", "firstName", person, in: context)
        let age = object?.value(forKey: "age") as? Int16 ?? 0
        let team = (object?.value(forKey: "team") as? NSManagedObject)?.value(forKey: "title") as? String
        let otherTeams = teams.filter { $0 != team }
        switch choice {
        case 2, 3: return .age(label: person, (max(age, 1) - 1 + Int16(random.int(in: 1...98))) % 99 + 1)
        case 4: return .rename(label: person, "N\(counter)")
        case 5, 6:
            if team != nil && (otherTeams.isEmpty || random.chance(0.2)) { return .join(label: person, team: nil) }
            if otherTeams.isEmpty { return .insertTeam("T\(counter)") }
            return .join(label: person, team: random.pick(otherTeams))
        case 7: return .delete(label: person)
        case 8:
            return teams.isEmpty || random.chance(0.6) ? .insertTeam("T\(counter)") : .deleteTeam(random.pick(teams))
        default: return .insertTeam("T\(counter)")
        }
    }

    static func runDifferential(seed: UInt64, storeType: String) throws {
        var random = SeededRandom(seed: seed)
        let context = try makeContext(storeType)
        let replay = try makeContext(storeType)
        for edit in [
            Edit.insertTeam("A"), .insertTeam("B"), .insert(label: "P0", age: 10), .join(label: "P0", team: "A"),
        ] {
            try apply(edit, to: context)
            try apply(edit, to: replay)
        }
        try context.save()
        try replay.save()

        let undoManager = UndoManager()
        undoManager.groupsByEvent = false
        context.undoManager = undoManager
        var done: [Edit] = []
        var undone: [Edit] = []
        var counter = 0
        for _ in 0..<40 {
            switch random.int(in: 0...9) {
            case 0, 1, 2, 3, 4:
                let edit = try randomEdit(&random, context, counter: &counter)
                undoManager.beginUndoGrouping()
                try apply(edit, to: context)
                context.processPendingChanges()
                undoManager.endUndoGrouping()
                done.append(edit)
                undone = []
            case 5, 6:
                guard let edit = done.popLast() else { continue }
                #expect(undoManager.canUndo, "seed \(seed)")
                context.undo()
                undone.append(edit)
            case 7, 8:
                guard let edit = undone.popLast() else { continue }
                #expect(undoManager.canRedo, "seed \(seed)")
                context.redo()
                done.append(edit)
            default:
                try context.save()
            }
        }
        #expect(undoManager.canUndo == !done.isEmpty && undoManager.canRedo == !undone.isEmpty, "seed \(seed)")
        for edit in done { try apply(edit, to: replay) }
        replay.processPendingChanges()
        #expect(try state(context) == state(replay), "seed \(seed) on \(storeType): live state")
        try context.save()
        try replay.save()
        let reread = makeReader(context)
        let rereadReplay = makeReader(replay)
        #expect(try state(reread) == state(rereadReplay), "seed \(seed) on \(storeType): saved state")
    }

    static func makeReader(_ context: NSManagedObjectContext) -> NSManagedObjectContext {
        PageFileFixtures.context(context.persistentStoreCoordinator!)
    }

    @Test(arguments: storeTypes) func randomUndoRedoEqualsReplayingTheSurvivingEdits(storeType: String) throws {
        let base = SeededRandom.environmentSeed ?? 1
        for seed in base..<base + (storeType == NSInMemoryStoreType ? 60 : 20) {
            try Self.runDifferential(seed: seed, storeType: storeType)
        }
    }
}
