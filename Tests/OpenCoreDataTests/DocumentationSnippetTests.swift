import Foundation
import OpenCoreData
import TestSupport
import Testing

/// The DocC articles' code compiles (mirrored in DocumentationSnippets.swift) and does
/// what the articles say.
@Suite struct DocumentationSnippetTests {
    static let catalog = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/OpenCoreData/OpenCoreData.docc")
    static let mirror = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("DocumentationSnippets.swift")

    /// The Swift blocks of an article, each as its lines without indentation or blank
    /// lines. A block starting `// Package.swift` is a manifest excerpt, not code to run.
    static func swiftBlocks(in text: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current == nil, trimmed == "```swift" {
                current = []
            } else if current != nil, trimmed == "```" {
                if let block = current, block.first != "// Package.swift" { blocks.append(block) }
                current = nil
            } else if current != nil, !trimmed.isEmpty {
                current?.append(trimmed)
            }
        }
        return blocks
    }

    static func normalizedLines(of text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test func everyArticlesSwiftBlockIsMirroredInTheTests() throws {
        let articles = try FileManager.default.contentsOfDirectory(atPath: Self.catalog.path)
            .filter { $0.hasSuffix(".md") }
        #expect(
            Set(articles).isSuperset(of: [
                "OpenCoreData.md", "GettingStarted.md", "PortingFromCoreData.md", "PredicateSemantics.md",
                "StoresAndDurability.md", "Performance.md", "Concurrency.md",
            ]))
        let mirrored = Self.normalizedLines(of: try String(contentsOf: Self.mirror, encoding: .utf8))
        var checked = 0
        for article in articles {
            let text = try String(contentsOf: Self.catalog.appendingPathComponent(article), encoding: .utf8)
            for block in Self.swiftBlocks(in: text) {
                checked += 1
                let found = (0...max(0, mirrored.count - block.count)).contains {
                    Array(mirrored[$0..<min(mirrored.count, $0 + block.count)]) == block
                }
                #expect(found, "\(article): a Swift block is not mirrored in DocumentationSnippets.swift: \(block[0])")
            }
        }
        #expect(checked >= 8)
    }

    @Test func theBlockExtractorFindsBlocksAndSkipsManifests() {
        let text = "Intro\n```swift\n  let a = 1\n\n  let b = 2\n```\n```swift\n// Package.swift\nx\n```\n"
        #expect(Self.swiftBlocks(in: text) == [["let a = 1", "let b = 2"]])
    }

    @Test func gettingStartedSavesAndFetches() throws {
        let directory = try TestScratch.directory("docs")
        defer { try? FileManager.default.removeItem(at: directory) }
        let storeURL = directory.appendingPathComponent("People.store")
        #expect(try run(storeURL: storeURL) == ["Ada"])
        #expect(try landingPage(model: makeModel(), storeURL: storeURL) == ["Ada"])
        #expect(inMemoryContainer().persistentStoreCoordinator.persistentStores.first?.type == NSInMemoryStoreType)
        let description = durableDescription(at: storeURL)
        #expect(description.options[PageFileStoreDurabilityOption] as? String == "normal")
    }

    @Test func concurrencyArticleImportsAndCounts() async throws {
        let container = inMemoryContainer()
        try await importNames(["Ada", "Grace", "Alan"], into: container)
        #expect(try await countAdults(in: container) == 0, "ages default to 0")
        let context = container.viewContext
        let all = try context.fetch(NSFetchRequest<Person>(entityName: "Person"))
        #expect(Set(all.compactMap(\.name)) == ["Ada", "Grace", "Alan"])
        for person in all { person.age = 40 }
        try context.save()
        #expect(try await countAdults(in: container) == 3)
    }

    @Test func performanceArticleFetchesWithPrefetching() throws {
        let customer = NSEntityDescription()
        customer.name = "Customer"
        let order = NSEntityDescription()
        order.name = "Order"
        let total = NSAttributeDescription()
        total.name = "total"
        total.attributeType = .doubleAttributeType
        let date = NSAttributeDescription()
        date.name = "date"
        date.attributeType = .dateAttributeType
        let orders = NSRelationshipDescription()
        orders.name = "orders"
        orders.destinationEntity = order
        orders.maxCount = 0
        let owner = NSRelationshipDescription()
        owner.name = "customer"
        owner.destinationEntity = customer
        owner.maxCount = 1
        orders.inverseRelationship = owner
        owner.inverseRelationship = orders
        customer.properties = [orders]
        order.properties = [total, date, owner]
        let model = NSManagedObjectModel()
        model.entities = [customer, order]
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(ofType: NSInMemoryStoreType, configurationName: nil, at: nil, options: nil)
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let buyer = NSEntityDescription.insertNewObject(forEntityName: "Customer", into: context)
            for index in 0..<80 {
                let item = NSEntityDescription.insertNewObject(forEntityName: "Order", into: context)
                item.setValue(Double(index * 5), forKey: "total")
                item.setValue(Date(timeIntervalSince1970: Double(index)), forKey: "date")
                item.setValue(buyer, forKey: "customer")
            }
            try context.save()
            context.reset()
            let recent = try recentOrders(in: context)
            #expect(recent.count == 50, "totals 100...395 are 60 orders; the limit keeps 50")
            let totals = recent.compactMap { $0.value(forKey: "total") as? Double }
            #expect(totals.first == 395 && totals == totals.sorted(by: >), "newest first")
        }
    }
}
