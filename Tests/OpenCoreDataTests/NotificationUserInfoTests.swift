// The context's notification userInfo, filled into prebuilt templates
// (NotificationUserInfo.swift): every combination of kinds must give exactly the keys of
// the kinds that have objects, each holding its own objects, and a filled dictionary must
// never change the template or an earlier one.
import Foundation
import Testing

@testable import OpenCoreData

@Suite struct NotificationUserInfoTests {
    @Test func everyCombinationOfKindsHasExactlyItsKeysAndObjects() {
        let entity = NSEntityDescription()
        entity.name = "Thing"
        let model = NSManagedObjectModel()
        model.entities = [entity]
        let objects = (0..<4).map { _ in NSManagedObject(entity: entity, insertInto: nil) }
        let keys = [NSInsertedObjectsKey, NSUpdatedObjectsKey, NSDeletedObjectsKey, NSRefreshedObjectsKey]
        var earlier: [(info: [AnyHashable: Any], mask: Int)] = []
        for mask in 0..<16 {
            let sets = (0..<4).map { mask & (1 << $0) != 0 ? Set([objects[$0]]) : Set<NSManagedObject>() }
            let changes = ObjectChanges(inserted: sets[0], updated: sets[1], deleted: sets[2], refreshed: sets[3])
            let info = changes.userInfo
            #expect(info.count == mask.nonzeroBitCount, "mask \(mask)")
            for (bit, key) in keys.enumerated() {
                let value = info[key] as? Set<NSManagedObject>
                #expect(value == (mask & (1 << bit) != 0 ? [objects[bit]] : nil), "mask \(mask), \(key)")
            }
            earlier.append((info, mask))
        }
        // The dictionaries handed out earlier still hold their own objects.
        for (info, mask) in earlier {
            for (bit, key) in keys.enumerated() where mask & (1 << bit) != 0 {
                #expect((info[key] as? Set<NSManagedObject>) == [objects[bit]], "mask \(mask), \(key) later")
            }
        }
        let saved = NotificationUserInfo.didSave.filled([
            Set([objects[0]]), Set<NSManagedObject>(), Set([objects[2], objects[3]]), "changes",
        ])
        #expect(saved.count == 4)
        #expect(saved[NSInsertedObjectsKey] as? Set<NSManagedObject> == [objects[0]])
        #expect(saved[NSUpdatedObjectsKey] as? Set<NSManagedObject> == [])
        #expect(saved[NSDeletedObjectsKey] as? Set<NSManagedObject> == [objects[2], objects[3]])
        #expect(saved[SavedChanges.userInfoKey] as? String == "changes")
    }
}
