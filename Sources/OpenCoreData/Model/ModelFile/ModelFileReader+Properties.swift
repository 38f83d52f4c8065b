// Reading an entity's properties: `<attribute>`, `<relationship>`, `<fetchedProperty>`.
//
// What each XML attribute becomes (absent flags are NO; Xcode omits them):
//   name, optional (absent: required), transient, elementID → renamingIdentifier,
//   versionHashModifier, indexed, spotlightIndexingEnabled → isIndexedBySpotlight,
//   storedInTruthFile → isStoredInExternalRecord;
//   attribute: attributeType, defaultValueString / defaultDateTimeInterval → defaultValue,
//   minValueString, maxValueString, minDateTimeInterval, maxDateTimeInterval,
//   regularExpressionString → validation predicates, allowsExternalBinaryDataStorage,
//   preserveAfterDeletion → preservesValueInHistoryOnDeletion, allowsCloudEncryption,
//   valueTransformerName, customClassName → attributeValueClassName,
//   derived + derivationExpression → NSDerivedAttributeDescription,
//   attributeType="Composite" + composite → NSCompositeAttributeDescription;
//   relationship: toMany, ordered, minCount, maxCount, deletionRule, destinationEntity,
//   inverseName, inverseEntity.
// usesScalarValueType and syncable steer Xcode's code generator and sync; they are read
// and ignored.
import Foundation

extension ModelFileReader {
    /// The settings every property shares.
    private func readCommon(_ property: NSPropertyDescription, _ attributes: inout ModelFileAttributes, file: URL)
        throws(ModelFileError)
    {
        property.name = try attributes.required("name")
        property.isOptional = try attributes.flag("optional") ?? false
        property.isTransient = try attributes.flag("transient") ?? false
        property.renamingIdentifier = attributes.string("elementID")
        property.versionHashModifier = attributes.string("versionHashModifier")
        property.isIndexed = try attributes.flag("indexed") ?? false
        property.isIndexedBySpotlight = try attributes.flag("spotlightIndexingEnabled") ?? false
        property.isStoredInExternalRecord = try attributes.flag("storedInTruthFile") ?? false
        attributes.ignore("syncable")
    }

    /// Reads the `<userInfo>` child, the only child a property may have besides a
    /// fetched property's request.
    private func readChildren(
        _ property: NSPropertyDescription, _ element: ModelFileElement, file: URL, allowing allowed: String? = nil
    ) throws(ModelFileError) {
        for child in element.children where child.name != allowed {
            guard child.name == "userInfo" else { throw child.unexpected(in: element.name, file: file) }
            property.userInfo = try readUserInfo(child, file: file)
        }
    }

    func readAttribute(_ element: ModelFileElement, file: URL) throws(ModelFileError) -> NSAttributeDescription {
        var attributes = ModelFileAttributes(element, file: file)
        let typeName = try attributes.required("attributeType")
        let derived = try attributes.flag("derived") ?? false
        let attribute: NSAttributeDescription
        if typeName == "Composite" {
            let composite = NSCompositeAttributeDescription()
            composites.append((composite, try attributes.required("composite"), attributes.position))
            attribute = composite
        } else {
            guard let type = ModelFileValues.attributeTypes[typeName] else {
                throw attributes.error("unknown attributeType '\(typeName)'")
            }
            attribute = derived ? NSDerivedAttributeDescription() : NSAttributeDescription()
            attribute.attributeType = type
        }
        try readCommon(attribute, &attributes, file: file)
        if let derivedAttribute = attribute as? NSDerivedAttributeDescription {
            let format = try attributes.required("derivationExpression")
            let expression = NSExpression(format: format)
            if let error = expression.validationError {
                throw attributes.error("the derivation expression '\(format)' does not parse: \(error)")
            }
            derivedAttribute.derivationExpression = expression
        } else if attributes.string("derivationExpression") != nil {
            throw attributes.error("derivationExpression without derived=\"YES\"")
        }
        if let text = attributes.string("defaultValueString") {
            attribute.defaultValue = try ModelFileValues.defaultValue(
                text, type: attribute.attributeType, attributes: attributes)
        }
        if let interval = try attributes.number("defaultDateTimeInterval") {
            guard attribute.attributeType == .dateAttributeType else {
                throw attributes.error("defaultDateTimeInterval applies to Date attributes only")
            }
            attribute.defaultValue = Date(timeIntervalSinceReferenceDate: interval)
        }
        let validation = try ModelFileValues.validation(of: attribute, from: &attributes)
        if !validation.predicates.isEmpty {
            attribute.setValidationPredicates(validation.predicates, withValidationWarnings: validation.warnings)
            attribute.validationErrorCodes = validation.codes
        }
        attribute.allowsExternalBinaryDataStorage = try attributes.flag("allowsExternalBinaryDataStorage") ?? false
        attribute.preservesValueInHistoryOnDeletion = try attributes.flag("preserveAfterDeletion") ?? false
        attribute.allowsCloudEncryption = try attributes.flag("allowsCloudEncryption") ?? false
        attribute.valueTransformerName = attributes.string("valueTransformerName")
        attribute.attributeValueClassName = attributes.string("customClassName")
        attributes.ignore("usesScalarValueType")
        try attributes.finish()
        try readChildren(attribute, element, file: file)
        return attribute
    }

    func readRelationship(_ element: ModelFileElement, file: URL) throws(ModelFileError) -> NSRelationshipDescription {
        var attributes = ModelFileAttributes(element, file: file)
        let relationship = NSRelationshipDescription()
        try readCommon(relationship, &attributes, file: file)
        let toMany = try attributes.flag("toMany") ?? false
        relationship.minCount = try attributes.count("minCount") ?? 0
        relationship.maxCount = try attributes.count("maxCount") ?? (toMany ? 0 : 1)
        if toMany && relationship.maxCount == 1 {
            throw attributes.error("a to-many relationship with maxCount 1")
        }
        if !toMany && relationship.maxCount != 1 {
            throw attributes.error("a to-one relationship with maxCount \(relationship.maxCount)")
        }
        relationship.isOrdered = try attributes.flag("ordered") ?? false
        let rule = attributes.string("deletionRule") ?? "Nullify"
        guard let deleteRule = ModelFileValues.deleteRules[rule] else {
            throw attributes.error("unknown deletionRule '\(rule)' (Nullify, Cascade, Deny or No Action)")
        }
        relationship.deleteRule = deleteRule
        relationships.append(
            PendingRelationship(
                relationship: relationship, destination: try attributes.required("destinationEntity"),
                inverseName: attributes.string("inverseName"), inverseEntity: attributes.string("inverseEntity"),
                position: attributes.position))
        try attributes.finish()
        try readChildren(relationship, element, file: file)
        return relationship
    }

    func readFetchedProperty(_ element: ModelFileElement, file: URL) throws(ModelFileError)
        -> NSFetchedPropertyDescription
    {
        var attributes = ModelFileAttributes(element, file: file)
        let property = NSFetchedPropertyDescription()
        try readCommon(property, &attributes, file: file)
        try attributes.finish()
        let requests = element.children.filter { $0.name == "fetchRequest" }
        guard requests.count == 1, let request = requests.first else {
            throw attributes.error("a fetched property needs exactly one <fetchRequest>, it has \(requests.count)")
        }
        property.fetchRequest = try readFetchRequest(request, file: file).request
        try readChildren(property, element, file: file, allowing: "fetchRequest")
        return property
    }
}
