// A fetch offset near Int.max with a limit: the window's end overflows Int, which must
// not trap the store's early-stop plan (user input reaches it unchanged).
import Foundation
import OpenCoreData
import Testing

@Suite struct FetchOffsetOverflowTests {
    @Test(arguments: BatchFixtures.storeTypes)
    func anOffsetNearIntMaxWithALimitFetchesNothing(storeType: String) throws {
        let context = try BatchFixtures.freshContext(storeType)
        for index in 0..<5 { BatchFixtures.item(context, "i\(index)", count: Int32(index)) }
        try context.save()
        let request = NSFetchRequest<NSManagedObject>(entityName: "Item")
        request.sortDescriptors = [NSSortDescriptor(key: "count", ascending: true)]
        request.fetchOffset = Int.max - 1
        request.fetchLimit = 10
        #expect(try context.fetch(request).isEmpty)
        request.fetchOffset = 2
        #expect(try context.fetch(request).count == 3)
    }
}
