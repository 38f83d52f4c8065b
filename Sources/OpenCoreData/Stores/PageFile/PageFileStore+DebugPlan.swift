// What the default store tells debug logging at level 2 (OPENCOREDATA_DEBUG=2): the
// plan of a fetch or count, read again from the planner the fetch uses.
import Foundation
import StorageEngine

extension PageFileStore {
    /// The index and key ranges (or the scan) the store uses for `request`, and how many
    /// entries or rows that examines, per entity of the hierarchy: debug logging, level 2.
    func describePlan(for request: NSFetchRequest<NSFetchRequestResult>) -> String {
        guard let entity = request.entity else { return "no entity" }
        let entities = entity.hierarchy(includingSubentities: request.includesSubentities)
        let parts = try? readCommitted { transaction in
            try entities.map { candidate -> String in
                let info = try info(for: candidate)
                guard
                    let plan = PageFileQueryPlanner.plan(request.predicate, info: info),
                    let index = try transaction.tree(named: plan.index.treeName)
                else {
                    let rows = try transaction.tree(named: info.treeName)?.count ?? 0
                    return "scan \(info.treeName) (\(rows) rows examined)"
                }
                var entries = 0
                for range in plan.ranges { entries += try index.count(from: range.lower, to: range.upper) }
                return "index \(plan.index.treeName), \(plan.ranges.count) key ranges (\(entries) entries examined"
                    + (plan.isExact ? ", exact: no row evaluated)" : ", each row evaluated)")
            }
        }
        let location = "the store at \(url?.path ?? "?")"
        return "\(location): " + (parts?.joined(separator: "; ") ?? "no plan (the store could not be read)")
    }
}
