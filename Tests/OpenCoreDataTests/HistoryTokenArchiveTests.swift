import Foundation
import Testing

@testable import OpenCoreData

/// History tokens kept as the guides keep them: a secure keyed archive in UserDefaults.
@Suite struct HistoryTokenArchiveTests {
    @Test func aTokenSurvivesFoundationsSecureKeyedArchiveAndUserDefaults() throws {
        let token = NSPersistentHistoryToken(sequencesByStore: ["A-store": 12, "B-store": 3])
        let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        let suite = "history-token-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set(data, forKey: "lastHistoryToken")
        let stored = try #require(defaults.data(forKey: "lastHistoryToken"))
        let restored = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: stored)
        #expect(restored == token)
        #expect(restored?.sequence(forStore: "A-store") == 12)
    }

    @Test func aTokenFromAStoreRoundTripsAndStillFetches() throws {
        let url = try PageFileFixtures.temporaryURL()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: PageFileFixtures.peopleModel)
        try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: url,
            options: [NSPersistentHistoryTrackingKey: true as NSNumber, PageFileStoreDurabilityOption: "off"])
        let context = PageFileFixtures.context(coordinator)
        PageFileFixtures.person(context, "A", "B", 1, "a@x")
        try context.save()
        let token = try #require(coordinator.currentPersistentHistoryToken(fromStores: nil))
        PageFileFixtures.person(context, "C", "D", 2, "c@x")
        try context.save()
        let data = try NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        let restored = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data)
        let result = try context.execute(NSPersistentHistoryChangeRequest.fetchHistory(after: restored))
        let transactions = (result as? NSPersistentHistoryResult)?.result as? [NSPersistentHistoryTransaction]
        #expect(transactions?.count == 1)
    }

    @Test func anArchiveOfSomethingElseIsNotAToken() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: NSString("token"), requiringSecureCoding: true)
        // Foundation on Linux answers nil where Apple's throws: either way, no token.
        let decoded = try? NSKeyedUnarchiver.unarchivedObject(ofClass: NSPersistentHistoryToken.self, from: data)
        #expect(decoded == nil)
    }
}
