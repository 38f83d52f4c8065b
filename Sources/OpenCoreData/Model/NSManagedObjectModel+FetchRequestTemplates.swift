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
        return template.copy(substituting: variables)
    }

    /// Stores `request` as the template named `name`; nil removes the template.
    ///
    /// - Precondition: no coordinator uses the model yet.
    public func setFetchRequestTemplate(_ request: NSFetchRequest<NSFetchRequestResult>?, forName name: String) {
        assertEditable()
        fetchRequestTemplates[name] = request
    }
}

extension NSFetchRequest where ResultType == NSFetchRequestResult {
    /// A copy of this request whose predicate has `variables` substituted (templates,
    /// fetched properties).
    func copy(substituting variables: [String: Any]) -> NSFetchRequest<NSFetchRequestResult> {
        let copy = NSFetchRequest<NSFetchRequestResult>()
        if let entity { copy.entity = entity } else { copy.entityName = entityName }
        copy.predicate = predicate?.withSubstitutionVariables(variables)
        copy.sortDescriptors = sortDescriptors
        copy.fetchLimit = fetchLimit
        copy.fetchOffset = fetchOffset
        copy.fetchBatchSize = fetchBatchSize
        copy.includesSubentities = includesSubentities
        copy.includesPendingChanges = includesPendingChanges
        copy.includesPropertyValues = includesPropertyValues
        copy.returnsObjectsAsFaults = returnsObjectsAsFaults
        copy.returnsDistinctResults = returnsDistinctResults
        copy.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        copy.propertiesToFetch = propertiesToFetch
        copy.propertiesToGroupBy = propertiesToGroupBy
        copy.havingPredicate = havingPredicate
        copy.resultType = resultType
        copy.shouldRefreshRefetchedObjects = shouldRefreshRefetchedObjects
        return copy
    }
}
