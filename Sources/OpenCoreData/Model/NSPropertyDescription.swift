// The common part of attributes, relationships and fetched properties.
import Foundation

/// A property of an entity: an attribute, a relationship or an expression.
///
/// A description is editable until a coordinator uses its model; changing it
/// afterwards is a programming error and stops the program with a message (Core Data
/// raises an exception there).
open class NSPropertyDescription: NSObject, @unchecked Sendable {
    /// The property's name, unique within its entity.
    open var name: String = "" {
        willSet { assertEditable("name") }
    }
    /// Whether an object may be saved without a value for this property.
    open var isOptional: Bool = true {
        willSet { assertEditable("isOptional") }
    }
    /// Whether the value lives only in memory and is never saved.
    open var isTransient: Bool = false {
        willSet { assertEditable("isTransient") }
    }
    /// Whether the value is indexed by the store (Core Data's legacy index flag).
    open var isIndexed: Bool = false {
        willSet { assertEditable("isIndexed") }
    }
    /// Whether Spotlight indexes the value (informational: there is no Spotlight here).
    open var isIndexedBySpotlight: Bool = false {
        willSet { assertEditable("isIndexedBySpotlight") }
    }
    /// Whether the value is also kept in an external record file (informational,
    /// deprecated in Core Data).
    open var isStoredInExternalRecord: Bool = false {
        willSet { assertEditable("isStoredInExternalRecord") }
    }
    /// Your own information about the property.
    open var userInfo: [AnyHashable: Any]? {
        willSet { assertEditable("userInfo") }
    }
    /// The property's name in the previous model version, for migration.
    open var renamingIdentifier: String? {
        willSet { assertEditable("renamingIdentifier") }
    }
    /// Extra text mixed into the version hash to force a new version.
    open var versionHashModifier: String? {
        willSet { assertEditable("versionHashModifier") }
    }
    /// Predicates a value must satisfy to pass validation.
    open private(set) var validationPredicates: [NSPredicate] = []
    /// The error messages of `validationPredicates`, in the same order.
    open private(set) var validationWarnings: [Any] = []
    /// The Core Data error code of each validation predicate that has one (a model
    /// file's minimum, maximum or pattern: 1610-1680); the others fail with 1550.
    var validationErrorCodes: [Int] = []

    /// The entity this property belongs to (set when it is added to an entity).
    open internal(set) var entity: NSEntityDescription? {
        get { entityHandle?.target }
        set { entityHandle = newValue?.referenceHandle }
    }
    private var entityHandle: WeakHandle<NSEntityDescription>?

    /// Whether the property is an attribute.
    var isAttribute: Bool { false }

    /// Creates an unnamed property.
    public override init() {
        super.init()
    }

    /// Sets the validation predicates and their warnings (the same count).
    open func setValidationPredicates(_ predicates: [NSPredicate]?, withValidationWarnings warnings: [String]?) {
        assertEditable("validationPredicates")
        validationPredicates = predicates ?? []
        validationWarnings = warnings ?? []
        validationErrorCodes = []
    }

    /// The property's version hash: it changes when anything that affects storage
    /// changes, and only then.
    ///
    /// Computed from the inputs Core Data documents: the name, `isOptional`,
    /// `isTransient`, whether the property is read-only, the ``versionHashModifier``,
    /// and for an attribute its type, for a relationship its destination entity's name,
    /// its inverse's name, `minCount`, `maxCount` and `isOrdered`. Default values,
    /// validation predicates, indexing flags, the value transformer and user info are
    /// not part of it, so changing them needs no migration. The exact bytes are in
    /// SPEC.md (§3.10).
    open var versionHash: Data {
        VersionHash.digest(versionHashComponents)
    }

    /// Whether objects cannot set the value (derived attributes, fetched properties).
    var isReadOnly: Bool { false }

    /// The first component of the version hash: what kind of property this is.
    var versionHashKind: String { "property" }

    /// The text the version hash is computed from (SPEC.md §3.10).
    var versionHashComponents: [String] {
        [
            versionHashKind, name, VersionHash.flag(isOptional), VersionHash.flag(isTransient),
            VersionHash.flag(isReadOnly), versionHashModifier ?? "",
        ]
    }

    func assertEditable(_ what: String) {
        if let entity, let model = entity.managedObjectModel, model.isFrozen {
            preconditionFailure(
                "OpenCoreData: cannot change '\(what)' of property '\(name)' of entity '\(entity.name ?? "?")': "
                    + "its model is in use by a persistent store coordinator and is immutable")
        }
    }
}
