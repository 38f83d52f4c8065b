// The guides' model features in ../shared/reference, on every store, as a Core Data user
// writes them:
// - core-data-guide.txt, "Transformable Attributes": the AddressTransformer (here
//   GuideAddressTransformer, declared in FoundationGapsPortingFormsTests.swift with the
//   changes noted there) registered and named by a transformable attribute whose custom
//   class is the address, and "Encrypt sensitive attributes using Transformable"
//   (EncryptedStringTransformer, same file), each saved and read back through a store;
// - making-apps-with-core-data.md, "Denormalization": every supported derivation the talk
//   lists (outright duplication of an attachment's identifier and the image data that
//   backs it, lower-casing a tag's name, canonicalizing a Unicode string, an aggregate
//   across a to-many relationship, a global function without parameters for "last
//   updated"), defined in code with NSDerivedAttributeDescription as the talk says;
// - core-data-skill.md, "Composite Attributes": a Composite attribute with sub-attributes
//   nested beneath it, acting as one unit, mapped to a Codable struct, and Apple's
//   NSCompositeAttributeDescription example the skill links (`magnitude.richter > 4.5`).
import Foundation
import OpenCoreData
import Testing

@Suite struct GuideModelFeatureTests {
    static let storeTypes = TestStack.storeTypes

    static func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }

    static func container(_ type: String, _ model: NSManagedObjectModel, _ directory: URL) throws
        -> NSPersistentContainer
    {
        let container = NSPersistentContainer(name: "Guide", managedObjectModel: model)
        let description = NSPersistentStoreDescription(url: directory.appendingPathComponent("guide.store"))
        description.type = type
        container.persistentStoreDescriptions = [description]
        var loadError: Error?
        container.loadPersistentStores { _, error in loadError = error }
        if let loadError { throw loadError }
        return container
    }

    // MARK: core-data-guide.txt, Transformable Attributes

    @Test(arguments: storeTypes) func theGuidesTransformersRoundTripThroughTheStore(type: String) throws {
        // Register in AppDelegate
        GuideAddressTransformer.register()
        ValueTransformer.setValueTransformer(
            EncryptedStringTransformer(), forName: NSValueTransformerName("EncryptedStringTransformer"))
        // In the data model, set: Type: Transformable, Custom Class: Address, Transformer: AddressTransformer
        let address = Self.attribute("address", .transformableAttributeType)
        address.attributeValueClassName = NSStringFromClass(GuideAddress.self)
        address.valueTransformerName = GuideAddressTransformer.name.rawValue
        let secret = Self.attribute("secret", .transformableAttributeType)
        secret.valueTransformerName = "EncryptedStringTransformer"
        let person = NSEntityDescription()
        person.name = "Person"
        person.properties = [Self.attribute("firstName", .stringAttributeType), address, secret]
        let model = NSManagedObjectModel()
        model.entities = [person]
        let directory = try TestStack.scratchDirectory("guide-model")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Self.container(type, model, directory)
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let ada = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
            ada.setValue("Ada", forKey: "firstName")
            ada.setValue(GuideAddress(street: "12 St James's Square"), forKey: "address")
            ada.setValue("pin 1815", forKey: "secret")
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let people = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
            #expect(people.count == 1)
            #expect((people.first?.value(forKey: "address") as? GuideAddress)?.street == "12 St James's Square")
            #expect(people.first?.value(forKey: "secret") as? String == "pin 1815")
        }
    }

    // MARK: making-apps-with-core-data.md, Denormalization

    /// Tag (name, searchName = canonical:(name), lowerName = lowercase:(name)); Post
    /// (title, cover: Attachment, coverIdentifier = cover.identifier, coverImage =
    /// cover.imageData, attachments, attachmentCount = attachments.@count, updatedAt =
    /// now()); Attachment (identifier, imageData, post, coverOf).
    static func talkModel() -> NSManagedObjectModel {
        let tag = NSEntityDescription()
        tag.name = "Tag"
        tag.properties = [
            attribute("name", .stringAttributeType),
            DerivedAttributeTests.derived("searchName", .stringAttributeType, "canonical:(name)"),
            DerivedAttributeTests.derived("lowerName", .stringAttributeType, "lowercase:(name)"),
        ]
        let post = NSEntityDescription()
        post.name = "Post"
        let attachment = NSEntityDescription()
        attachment.name = "Attachment"
        let cover = TestStack.relationship("cover", to: attachment, toMany: false)
        let coverOf = TestStack.relationship("coverOf", to: post, toMany: false)
        TestStack.pair(cover, coverOf)
        let attachments = TestStack.relationship("attachments", to: attachment, toMany: true)
        let owner = TestStack.relationship("post", to: post, toMany: false)
        TestStack.pair(attachments, owner)
        post.properties = [
            attribute("title", .stringAttributeType), cover, attachments,
            DerivedAttributeTests.derived("coverIdentifier", .UUIDAttributeType, "cover.identifier"),
            DerivedAttributeTests.derived("coverImage", .binaryDataAttributeType, "cover.imageData"),
            DerivedAttributeTests.derived("attachmentCount", .integer64AttributeType, "attachments.@count"),
            DerivedAttributeTests.derived("updatedAt", .dateAttributeType, "now()"),
        ]
        attachment.properties = [
            attribute("identifier", .UUIDAttributeType), attribute("imageData", .binaryDataAttributeType), owner,
            coverOf,
        ]
        let model = NSManagedObjectModel()
        model.entities = [tag, post, attachment]
        return model
    }

    @Test(arguments: storeTypes) func theTalksDerivationsAreMaintainedForYou(type: String) throws {
        let directory = try TestStack.scratchDirectory("guide-model")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Self.container(type, Self.talkModel(), directory)
        let context = container.newBackgroundContext()
        let identifier = UUID()
        let image = Data([0x89, 0x50, 0x4E, 0x47])
        let before = Date()
        try context.performAndWait {
            let tag = NSEntityDescription.insertNewObject(forEntityName: "Tag", into: context)
            tag.setValue("Crème BRÛLÉE", forKey: "name")
            let post = NSEntityDescription.insertNewObject(forEntityName: "Post", into: context)
            post.setValue("Dessert", forKey: "title")
            for index in 0..<3 {
                let attachment = NSEntityDescription.insertNewObject(forEntityName: "Attachment", into: context)
                attachment.setValue(index == 0 ? identifier : UUID(), forKey: "identifier")
                attachment.setValue(index == 0 ? image : Data([UInt8(index)]), forKey: "imageData")
                attachment.setValue(post, forKey: "post")
                if index == 0 { post.setValue(attachment, forKey: "cover") }
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let tag = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Tag")).first)
            #expect(tag.value(forKey: "searchName") as? String == "creme brulee")
            #expect(tag.value(forKey: "lowerName") as? String == "crème brûlée")
            // Derived attributes are fetchable: the canonical form finds the tag.
            let search = NSFetchRequest<NSManagedObject>(entityName: "Tag")
            search.predicate = NSPredicate(format: "searchName == %@", "creme brulee")
            #expect(try reader.count(for: search) == 1)
            let post = try #require(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")).first)
            #expect(post.value(forKey: "coverIdentifier") as? UUID == identifier)
            #expect(post.value(forKey: "coverImage") as? Data == image)
            #expect(post.value(forKey: "attachmentCount") as? Int64 == 3)
            let updatedAt = try #require(post.value(forKey: "updatedAt") as? Date)
            #expect(updatedAt >= before.addingTimeInterval(-1) && updatedAt <= Date().addingTimeInterval(1))
            // Removing an attachment keeps the aggregate right.
            let attachments = try #require(post.value(forKey: "attachments") as? Set<NSManagedObject>)
            let spare = try #require(attachments.first { $0.value(forKey: "identifier") as? UUID != identifier })
            reader.delete(spare)
            try reader.save()
        }
        let check = container.newBackgroundContext()
        try check.performAndWait {
            let post = try #require(try check.fetch(NSFetchRequest<NSManagedObject>(entityName: "Post")).first)
            #expect(post.value(forKey: "attachmentCount") as? Int64 == 2)
        }
    }

    // MARK: core-data-skill.md, Composite Attributes

    /// A Codable struct the composite maps to (SwiftData coexistence, as the skill says).
    struct Location: Codable, Equatable {
        struct Address: Codable, Equatable {
            var city: String
        }
        var latitude: Double
        var longitude: Double
        var address: Address
    }

    @Test(arguments: storeTypes) func theSkillsNestedCompositeActsAsOneUnit(type: String) throws {
        // Add a Composite type attribute and nest sub-attributes beneath it.
        let address = NSCompositeAttributeDescription()
        address.name = "address"
        address.elements = [Self.attribute("city", .stringAttributeType)]
        let location = NSCompositeAttributeDescription()
        location.name = "location"
        location.elements = [
            Self.attribute("latitude", .doubleAttributeType), Self.attribute("longitude", .doubleAttributeType),
            address,
        ]
        let trip = NSEntityDescription()
        trip.name = "CDTrip"
        trip.properties = [Self.attribute("name", .stringAttributeType), location]
        // Apple's example the skill links: `magnitude.richter > 4.5` on a Quake.
        let magnitude = NSCompositeAttributeDescription()
        magnitude.name = "magnitude"
        magnitude.elements = [Self.attribute("richter", .doubleAttributeType)]
        let quake = NSEntityDescription()
        quake.name = "Quake"
        quake.properties = [Self.attribute("code", .stringAttributeType), magnitude]
        quake.indexes = [
            NSFetchIndexDescription(
                name: "byRichter",
                elements: [NSFetchIndexElementDescription(property: magnitude.elements[0], collationType: .binary)])
        ]
        let model = NSManagedObjectModel()
        model.entities = [trip, quake]
        let directory = try TestStack.scratchDirectory("guide-model")
        defer { try? FileManager.default.removeItem(at: directory) }
        let container = try Self.container(type, model, directory)
        let oslo = Location(latitude: 59.91, longitude: 10.75, address: .init(city: "Oslo"))
        let context = container.newBackgroundContext()
        try context.performAndWait {
            let object = NSEntityDescription.insertNewObject(forEntityName: "CDTrip", into: context)
            object.setValue("Fjords", forKey: "name")
            let dictionary = try JSONSerialization.jsonObject(with: JSONEncoder().encode(oslo)) as? [String: Any]
            object.setValue(dictionary, forKey: "location")
            for (code, richter) in [("a", 3.9), ("b", 4.6), ("c", 5.2)] {
                let quake = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context)
                quake.setValue(code, forKey: "code")
                quake.setValue(["richter": richter], forKey: "magnitude")
            }
            try context.save()
        }
        let reader = container.newBackgroundContext()
        try reader.performAndWait {
            let request = NSFetchRequest<NSManagedObject>(entityName: "CDTrip")
            request.predicate = NSPredicate(format: "location.address.city == %@", "Oslo")
            let found = try #require(try reader.fetch(request).first)
            let stored = try #require(found.value(forKey: "location") as? [String: Any])
            let data = try JSONSerialization.data(withJSONObject: stored)
            #expect(try JSONDecoder().decode(Location.self, from: data) == oslo)
            #expect(found.value(forKeyPath: "location.latitude") as? Double == 59.91)
            // Use namespaced key paths to access a composite's individual attributes.
            let quakes = NSFetchRequest<NSManagedObject>(entityName: "Quake")
            quakes.predicate = NSPredicate(format: "magnitude.richter > 4.5")
            quakes.sortDescriptors = [NSSortDescriptor(key: "magnitude.richter", ascending: false)]
            #expect(try reader.fetch(quakes).compactMap { $0.value(forKey: "code") as? String } == ["c", "b"])
        }
    }
}
