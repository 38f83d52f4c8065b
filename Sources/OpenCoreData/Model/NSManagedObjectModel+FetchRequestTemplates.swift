// Fetch request templates: named, stored fetch requests whose predicates may hold
// $VARIABLES, defined in Xcode's model editor or in code.
import Foundation

extension NSManagedObjectModel {
    /// The fetch request templates by name.
    public var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] { fetchRequestTemplates }

    /// The template named `name`, or nil. Use it as it is (its predicate may still hold
    /// `$VARIABLES`); ``fetchRequestFromTemplate(withName:substitutionVariables:)``
    /// returns a copy with them replaced.
    public func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        fetchRequestTemplates[name]
    }

    /// A copy of the template named `name` whose predicate has each `$VARIABLE` in
    /// `variables` replaced by its value; nil when there is no such template.
    ///
    /// ```swift
    /// let request = model.fetchRequestFromTemplate(withName: "ByDepartment",
    ///                                              substitutionVariables: ["DEPARTMENT": "R&D"])
    /// ```
    public func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any])
        -> NSFetchRequest<NSFetchRequestResult>?
    {
        guard let template = fetchRequestTemplates[name] else { return nil }
        let copy = NSFetchRequest<NSFetchRequestResult>()
        if let entity = template.entity { copy.entity = entity } else { copy.entityName = template.entityName }
        copy.predicate = template.predicate?.withSubstitutionVariables(variables)
        copy.sortDescriptors = template.sortDescriptors
        copy.fetchLimit = template.fetchLimit
        copy.fetchOffset = template.fetchOffset
        copy.fetchBatchSize = template.fetchBatchSize
        copy.includesSubentities = template.includesSubentities
        copy.includesPendingChanges = template.includesPendingChanges
        copy.includesPropertyValues = template.includesPropertyValues
        copy.returnsObjectsAsFaults = template.returnsObjectsAsFaults
        copy.returnsDistinctResults = template.returnsDistinctResults
        copy.relationshipKeyPathsForPrefetching = template.relationshipKeyPathsForPrefetching
        copy.propertiesToFetch = template.propertiesToFetch
        copy.propertiesToGroupBy = template.propertiesToGroupBy
        copy.havingPredicate = template.havingPredicate
        copy.resultType = template.resultType
        copy.shouldRefreshRefetchedObjects = template.shouldRefreshRefetchedObjects
        return copy
    }

    /// Stores `request` as the template named `name`; nil removes the template.
    ///
    /// - Precondition: no coordinator uses the model yet.
    public func setFetchRequestTemplate(_ request: NSFetchRequest<NSFetchRequestResult>?, forName name: String) {
        assertEditable()
        fetchRequestTemplates[name] = request
    }
}
