// An object inserted under a stored uniqueness value and linked in the same save, from
// either side, becomes the stored row (an upsert): no join entry or reference names the
// row ID the insert was given and never kept, and both sides of every link agree. (A
// suspect for the soak's one "Tag names a missing Owner": an owner upserted and tagged in
// one save; it holds.)
import Foundation
import TestSupport
import Testing

@testable import OpenCoreData

@Suite struct UpsertLinkTests {
    typealias Fixtures = LinkedFixtures

    @Test(arguments: LinkedFixtures.storeTypes)
    func anUpsertedObjectLinkedInTheSameSaveKeepsItsLinks(storeType: String) throws {
        let policies: [NSMergePolicyType] = [
            .mergeByPropertyStoreTrumpMergePolicyType, .mergeByPropertyObjectTrumpMergePolicyType,
            .overwriteMergePolicyType, .rollbackMergePolicyType,
        ]
        let links: [(String, (NSManagedObject, NSManagedObject, NSManagedObject) -> Void)] = [
            ("tag side", { item, tag, _ in tag.mutableSetValue(forKey: "items").add(item) }),
            ("item side", { item, tag, _ in item.mutableSetValue(forKey: "tags").add(tag) }),
            ("group side", { item, _, group in group.mutableSetValue(forKey: "items").add(item) }),
            ("to-one", { item, _, group in item.setValue(group, forKey: "group") }),
        ]
        for policy in policies {
            for (how, link) in links {
                let label = "\(storeType), policy \(policy.rawValue), \(how)"
                let coordinator = try Fixtures.coordinator(storeType)
                let setup = Fixtures.context(coordinator)
                Fixtures.insert("Item", "x", into: setup)
                Fixtures.insert("Tag", "t", into: setup)
                Fixtures.insert("Group", "g", into: setup)
                try setup.save()
                let context = Fixtures.context(coordinator, policy)
                let tag = try #require(try Fixtures.fetch("Tag", "t", in: context))
                let group = try #require(try Fixtures.fetch("Group", "g", in: context))
                _ = tag.value(forKey: "items")
                _ = group.value(forKey: "items")
                let fresh = Fixtures.insert("Item", "x", into: context)
                link(fresh, tag, group)
                try context.save()
                let reader = Fixtures.context(coordinator)
                let stored = try #require(try Fixtures.fetch("Item", "x", in: reader))
                if how.hasPrefix("tag") || how.hasPrefix("item") {
                    #expect(Fixtures.names(stored.value(forKey: "tags")) == ["t"], "\(label)")
                    let storedTag = try #require(try Fixtures.fetch("Tag", "t", in: reader))
                    #expect(Fixtures.names(storedTag.value(forKey: "items")) == ["x"], "\(label)")
                } else {
                    // Store trump and rollback keep the stored row's to-one (none): either
                    // way both sides say the same.
                    let keepsStored =
                        policy == .mergeByPropertyStoreTrumpMergePolicyType
                        || policy == .rollbackMergePolicyType
                    #expect(
                        (stored.value(forKey: "group") as? NSManagedObject)?.value(forKey: "name") as? String
                            == (keepsStored ? nil : "g"), "\(label)")
                    let storedGroup = try #require(try Fixtures.fetch("Group", "g", in: reader))
                    #expect(
                        Fixtures.names(storedGroup.value(forKey: "items")) == (keepsStored ? [] : ["x"]), "\(label)")
                }
                #expect(try Fixtures.problems(coordinator) == [], "\(label)")
            }
        }
    }
}
