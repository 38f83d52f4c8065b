// A relationship: a reference from one entity's objects to another's.
import Foundation

/// A reference from the objects of one entity to objects of another (or the same) entity.
///
/// A relationship with `maxCount == 1` is to-one; any other `maxCount` (0 means no
/// limit) makes it to-many. Set `inverseRelationship` on both sides: contexts keep
/// the two sides consistent on every edit.
open class NSRelationshipDescription: NSPropertyDescription, @unchecked Sendable {
    /// The entity of the objects this relationship points to.
    open var destinationEntity: NSEntityDescription? {
        get { destinationHandle?.target }
        set {
            assertEditable("destinationEntity")
            destinationHandle = newValue?.referenceHandle
        }
    }
    private var destinationHandle: WeakHandle<NSEntityDescription>?
    /// The relationship on the destination that points back.
    open var inverseRelationship: NSRelationshipDescription? {
        get { inverseHandle?.target }
        set {
            assertEditable("inverseRelationship")
            inverseHandle = newValue?.referenceHandle
        }
    }
    private var inverseHandle: WeakHandle<NSRelationshipDescription>?
    /// What the inverse's `inverseRelationship` holds instead of `weak` (WeakHandle.swift).
    let referenceHandle = WeakHandle<NSRelationshipDescription>()
    /// The smallest number of destinations a valid object has (to-many).
    open var minCount: Int = 0 {
        willSet { assertEditable("minCount") }
    }
    /// The largest number of destinations a valid object has; 0 means no limit, 1 means to-one.
    open var maxCount: Int = 1 {
        willSet { assertEditable("maxCount") }
    }
    /// What deleting the source object does to the destinations.
    open var deleteRule: NSDeleteRule = .nullifyDeleteRule {
        willSet { assertEditable("deleteRule") }
    }
    /// Whether a to-many relationship keeps its destinations in order (`NSOrderedSet`).
    open var isOrdered: Bool = false {
        willSet { assertEditable("isOrdered") }
    }

    /// Whether this relationship holds any number of destinations.
    open var isToMany: Bool { maxCount != 1 }

    /// Whether a derived attribute of the model reads through this relationship: a save
    /// must then list it as the context holds it. Set once when the model freezes, before
    /// any coordinator uses it, and only read after, so the hot path takes no lock.
    private(set) var isReadByDerivedAttribute = false

    /// Records what ``isReadByDerivedAttribute`` says for every relationship of `model`:
    /// those its derived attributes read through (none when the plan is refused, as a
    /// store is then never added).
    static func noteDerivedDependencies(of model: NSManagedObjectModel) {
        guard let plan = try? DerivedAttributePlan(model: model, storeType: "") else { return }
        for dependency in plan.dependencies { dependency.relationship.isReadByDerivedAttribute = true }
    }

    /// Creates a to-one relationship with no destination.
    public override init() {
        super.init()
        referenceHandle.attach(self)
    }

    deinit {
        referenceHandle.clear()
    }

    override var versionHashKind: String { "relationship" }

    override var versionHashComponents: [String] {
        super.versionHashComponents + [
            destinationEntity?.name ?? "", inverseRelationship?.name ?? "", String(minCount), String(maxCount),
            VersionHash.flag(isOrdered),
        ]
    }
}
