// Index declarations of an entity: stores use them to plan fetches.
import Foundation

/// How an index element orders its values.
public enum NSFetchIndexElementType: UInt, Sendable {
    /// An ordinary ordered index.
    case binary = 0
    /// A spatial index (accepted; stores without one use an ordered index).
    case rTree = 1
}

/// One element of an index: a property and its order.
open class NSFetchIndexElementDescription: NSObject, @unchecked Sendable {
    /// The indexed property.
    open var property: NSPropertyDescription?
    /// The name of the indexed property.
    open var propertyName: String? { property?.name }
    /// The kind of index.
    open var collationType: NSFetchIndexElementType
    /// Whether values are ordered ascending.
    open var isAscending: Bool = true
    /// The index this element belongs to.
    open internal(set) weak var indexDescription: NSFetchIndexDescription?

    /// An element indexing `property` with `collationType`.
    public init(property: NSPropertyDescription, collationType: NSFetchIndexElementType) {
        self.property = property
        self.collationType = collationType
        super.init()
    }
}

/// A named index of an entity over one or more properties.
open class NSFetchIndexDescription: NSObject, @unchecked Sendable {
    /// The index's name, unique within its entity.
    open var name: String
    /// The indexed properties, most significant first.
    open var elements: [NSFetchIndexElementDescription] {
        didSet { for element in elements { element.indexDescription = self } }
    }
    /// Restricts the index to objects matching this predicate (partial index).
    open var partialIndexPredicate: NSPredicate?
    /// The entity the index belongs to.
    open internal(set) var entity: NSEntityDescription? {
        get { entityHandle?.target }
        set { entityHandle = newValue?.referenceHandle }
    }
    private var entityHandle: WeakHandle<NSEntityDescription>?

    /// An index named `name` over `elements`.
    public init(name: String, elements: [NSFetchIndexElementDescription]?) {
        self.name = name
        self.elements = elements ?? []
        super.init()
        for element in self.elements { element.indexDescription = self }
    }
}
