// Applying one batch of context changes to a tracker's results, in time proportional to
// the batch (times log n), not to the results:
//
//   1. affected    the objects the batch may have changed: those it lists, those the
//                  tracker saw touched, and the objects a merge names — registered ones,
//                  and stored rows not registered here that match the predicate (read
//                  from the store in one call; rows that do not match are never
//                  registered). Faults among them load in one store call.
//   2. old places  each affected result's position, index path and section, before
//                  anything moves.
//   3. membership  each affected object, on its current values: in this context, not
//                  deleted, matching the predicate; its section name. Nothing has
//                  changed yet, so an error here leaves the results as they were.
//   4. remove      every affected result leaves the list and its section's count.
//   5. insert      every affected member enters by binary search on the sort descriptors
//                  (the unchanged results are still in order, so the search is sound); a
//                  returning object keeps its sequence number, so among equal sort keys
//                  it returns to its place.
//   6. sections    counts by name; new sections placed by their first object; sections
//                  left empty are deleted. Each inserted object must lie in its
//                  section's range: if not, the sort no longer groups by section name and
//                  the tracker stops (as Core Data's controller does on that error).
//   7. classify    FetchedResultsChanges.swift's rules: entering or leaving, else a move
//                  when the unchanged results before it differ, its section changed, or
//                  it swapped with another changed object between the same neighbours.
//
// A request with fetchLimit or fetchOffset is fetched again instead (which objects are
// in the window depends on all of them) and compared with the old results: the objects
// in both that keep their relative order (a longest increasing run) stay, the others move.
import Foundation

extension FetchedResultsTracker {
    /// Applies `batch` to the results and returns what changed (nothing when the tracker had
    /// to stop following the context).
    func apply(_ batch: ObjectChanges) -> FetchedResultsChanges {
        let affected = affectedObjects(batch)
        clearTouched()
        guard !affected.isEmpty else { return FetchedResultsChanges(sections: [], objects: []) }
        loadFaults(affected)
        do {
            if request.fetchLimit > 0 || request.fetchOffset > 0 { return try refetchAndCompare(affected) }
            return try applyIncrementally(affected)
        } catch {
            stopFollowing()
            return FetchedResultsChanges(sections: [], objects: [])
        }
    }

    // MARK: Step 1

    private func affectedObjects(_ batch: ObjectChanges) -> [NSManagedObject] {
        guard let matcher else { return [] }
        var seen: Set<ObjectIdentifier> = []
        var result: [NSManagedObject] = []
        func add(_ object: NSManagedObject) {
            if matcher.includes(object.entity), seen.insert(ObjectIdentifier(object)).inserted { result.append(object) }
        }
        for object in touched { add(object) }
        for kind in [batch.inserted, batch.updated, batch.deleted, batch.refreshed] {
            for object in kind { add(object) }
        }
        var unregistered: [NSManagedObjectID] = []
        for id in batch.mergedObjectIDs where matcher.includes(id.entity) {
            if let object = context.registeredObject(for: id) {
                add(object)
            } else if !id.isTemporaryID {
                unregistered.append(id)
            }
        }
        for object in matchingStoredObjects(unregistered) { add(object) }
        return result
    }

    /// The objects of `ids` (registered nowhere here) whose stored rows match the request,
    /// registered as faults holding their rows.
    private func matchingStoredObjects(_ ids: [NSManagedObjectID]) -> [NSManagedObject] {
        guard !ids.isEmpty, let matcher else { return [] }
        // A child context's objects load through its parent: register and match them there.
        guard context.parent == nil, let coordinator = context.persistentStoreCoordinator,
            let rows = try? coordinator.rows(for: ids), let makeView = try? context.rowViewMaker()
        else { return ids.map { context.object(with: $0) } }
        var objects: [NSManagedObject] = []
        for (id, row) in zip(ids, rows) {
            guard let row, (try? matcher.matches(row: makeView(row))) == true else { continue }
            let object = context.object(with: id)
            if object.isFault && object.pendingFault == nil { object.pendingFault = .row(row) }
            objects.append(object)
        }
        return objects
    }

    /// Loads the faults among `objects` with one store call.
    private func loadFaults(_ objects: [NSManagedObject]) {
        guard context.parent == nil else { return }
        let waiting = objects.filter {
            $0.isFault && $0.pendingFault == nil && $0.managedObjectContext === context && !$0.objectID.isTemporaryID
        }
        guard waiting.count > 1 else { return }
        let batch = FaultBatch(objects: waiting, prefetchKeyPaths: [])
        for object in waiting { object.pendingFault = .batch(batch) }
    }

    /// Whether `object` is a result on its current values.
    private func isMember(_ object: NSManagedObject) throws -> Bool {
        guard object.managedObjectContext === context, let matcher else { return false }
        return try matcher.matches(object)
    }

    // MARK: Steps 2-7

    private func applyIncrementally(_ objects: [NSManagedObject]) throws -> FetchedResultsChanges {
        guard let matcher else { return FetchedResultsChanges(sections: [], objects: []) }
        let sort = try matcher.compiledSortDescriptors()
        let oldSections = sections
        // Steps 2 and 3: nothing changes before every question that may throw is answered.
        var entries: [AffectedObject] = []
        var oldSequences: [Int?] = []
        var oldSectionIndexes: [Int?] = []
        for object in objects {
            var entry = AffectedObject(object: object)
            var sequence: Int?
            var sectionIndex: Int?
            if let node = list.node(for: object) {
                let position = list.position(of: node)
                let path = indexPath(ofPosition: position)
                entry.oldPosition = position
                entry.oldPath = path
                entry.oldSectionName = sections[path.section].name
                sequence = node.sequence
                sectionIndex = path.section
            }
            if try isMember(object) { entry.newSectionName = try sectionName(of: object) }
            entries.append(entry)
            oldSequences.append(sequence)
            oldSectionIndexes.append(sectionIndex)
        }
        resultsDidChange()
        // Step 4.
        for (index, entry) in entries.enumerated() {
            guard let node = list.node(for: entry.object), let section = oldSectionIndexes[index] else { continue }
            list.remove(node)
            sections[section].count -= 1
            temporaryResults.remove(ObjectIdentifier(entry.object))
        }
        // Step 5: the list stays sorted after each insert; a compare that throws stops the tracker.
        var nodes: [RankedObjectList.Node?] = Array(repeating: nil, count: entries.count)
        for (index, entry) in entries.enumerated() where entry.newSectionName != nil {
            let object = entry.object
            let sequence = oldSequences[index] ?? nextSequence
            if oldSequences[index] == nil { nextSequence += 1 }
            nodes[index] = try list.insert(object, sequence: sequence) { other in
                let order = try sort.compare(object, other.object)
                if order != .orderedSame { return order }
                return sequence < other.sequence ? .orderedAscending : .orderedDescending
            }
            if object.objectID.isTemporaryID { temporaryResults.insert(ObjectIdentifier(object)) }
        }
        for index in entries.indices {
            if let node = nodes[index] { entries[index].newPosition = list.position(of: node) }
        }
        // Step 6.
        let created = try placeSections(of: entries)
        for index in entries.indices {
            if let position = entries[index].newPosition { entries[index].newPath = indexPath(ofPosition: position) }
        }
        // Step 7.
        markMoves(&entries)
        var sectionChanges: [FetchedResultsChanges.SectionChange] = []
        for (index, section) in oldSections.enumerated() where section.count == 0 && sectionNameKeyPath != nil {
            sectionChanges.append(.init(section: section, index: index, type: .delete))
        }
        for (index, section) in sections.enumerated() where created.contains(where: { $0 === section }) {
            sectionChanges.append(.init(section: section, index: index, type: .insert))
        }
        return FetchedResultsChanges(sections: sectionChanges, objects: entries)
    }

    /// Step 6: counts the members into sections by name, places new sections and drops
    /// empty ones; returns the new sections.
    ///
    /// - Throws: `NSCoreDataError` when an object falls outside its section's range (the
    ///   sort does not group by section name).
    private func placeSections(of entries: [AffectedObject]) throws -> [FetchedResultsSection] {
        guard sectionNameKeyPath != nil else {
            sections[0].count = list.count
            resultsDidChange()
            return []
        }
        var byName: [String: FetchedResultsSection] = [:]
        for section in sections { byName[section.name] = section }
        var created: [(section: FetchedResultsSection, first: Int)] = []
        for entry in entries {
            guard let name = entry.newSectionName, let position = entry.newPosition else { continue }
            if let section = byName[name] {
                section.count += 1
                if let index = created.firstIndex(where: { $0.section === section }) {
                    created[index].first = min(created[index].first, position)
                }
            } else {
                let section = FetchedResultsSection(name: name, count: 1, tracker: self)
                byName[name] = section
                created.append((section, position))
            }
        }
        created.sort { $0.first < $1.first }
        var placed: [FetchedResultsSection] = []
        var start = 0
        var next = 0
        for section in sections where section.count > 0 {
            while next < created.count, created[next].first <= start {
                placed.append(created[next].section)
                start += created[next].section.count
                next += 1
            }
            placed.append(section)
            start += section.count
        }
        placed += created[next...].map(\.section)
        sections = placed
        resultsDidChange()
        let starts = sectionStarts
        var indexes: [ObjectIdentifier: Int] = [:]
        for (index, section) in sections.enumerated() { indexes[ObjectIdentifier(section)] = index }
        for entry in entries {
            guard let name = entry.newSectionName, let position = entry.newPosition, let section = byName[name],
                let index = indexes[ObjectIdentifier(section)]
            else { continue }
            if position < starts[index] || position >= starts[index] + section.count {
                throw CoreDataError.make(
                    NSCoreDataError,
                    "NSFetchedResultsController: a changed object with section name '\(name)' sorts outside that "
                        + "section; the first sort descriptor must group like '\(sectionNameKeyPath ?? "")'")
            }
        }
        return created.map(\.section)
    }

    /// Step 7: marks the results that stay but move (see the file comment of
    /// FetchedResultsChanges.swift).
    private func markMoves(_ entries: inout [AffectedObject]) {
        let oldPositions = entries.compactMap(\.oldPosition).sorted()
        let newPositions = entries.compactMap(\.newPosition).sorted()
        /// How many unchanged results come before `position` among `positions`' list.
        func unchangedBefore(_ position: Int, _ positions: [Int]) -> Int {
            position - lowerBound(of: position, in: positions)
        }
        var groups: [Int: [Int]] = [:]
        for index in entries.indices {
            guard let old = entries[index].oldPosition, let new = entries[index].newPosition else { continue }
            let gap = unchangedBefore(old, oldPositions)
            if gap != unchangedBefore(new, newPositions)
                || entries[index].oldSectionName != entries[index].newSectionName
            {
                entries[index].isMoved = true
            } else {
                groups[gap, default: []].append(index)
            }
        }
        // Changed objects between the same unchanged neighbours must keep their order too.
        for members in groups.values where members.count > 1 {
            let byOld = members.sorted { (entries[$0].oldPosition ?? 0) < (entries[$1].oldPosition ?? 0) }
            let newOrder = byOld.map { entries[$0].newPosition ?? 0 }
            if zip(newOrder, newOrder.dropFirst()).contains(where: { $0 > $1 }) {
                for index in members { entries[index].isMoved = true }
            }
        }
    }

    // MARK: Fetching again

    /// Fetches the results again and reports how they differ from the old ones.
    private func refetchAndCompare(_ touchedObjects: [NSManagedObject]) throws -> FetchedResultsChanges {
        // The old places, before anything changes.
        let touchedSet = Set(touchedObjects.map(ObjectIdentifier.init))
        let oldSections = sections
        var entries: [AffectedObject] = []
        var entryIndex: [ObjectIdentifier: Int] = [:]
        var oldSequences: [ObjectIdentifier: Int] = [:]
        var position = 0
        for (sectionIndex, section) in oldSections.enumerated() {
            for (row, object) in list.objects(in: position..<position + section.count).enumerated() {
                var entry = AffectedObject(object: object)
                entry.isChanged = touchedSet.contains(ObjectIdentifier(object))
                entry.oldPosition = position + row
                entry.oldPath = IndexPath(row: row, section: sectionIndex)
                entry.oldSectionName = section.name
                entryIndex[ObjectIdentifier(object)] = entries.count
                entries.append(entry)
                oldSequences[ObjectIdentifier(object)] = list.node(for: object)?.sequence
            }
            position += section.count
        }

        let fetched = try context.fetchObjectsWithCandidates(request)
        var names: [String] = []
        var runs: [(name: String, count: Int)] = []
        for object in fetched.objects {
            let name = try sectionName(of: object)
            names.append(name)
            if let last = runs.last, last.name == name {
                runs[runs.count - 1].count += 1
            } else if runs.contains(where: { $0.name == name }) {
                throw CoreDataError.make(
                    NSCoreDataError, "NSFetchedResultsController: section '\(name)' is out of order after a change")
            } else {
                runs.append((name, 1))
            }
        }

        // The new sections keep the old ones' identities by name.
        var oldByName: [String: FetchedResultsSection] = [:]
        for section in oldSections { oldByName[section.name] = section }
        var created: [FetchedResultsSection] = []
        var newSections: [FetchedResultsSection] = []
        if sectionNameKeyPath == nil {
            newSections = [oldSections.first ?? FetchedResultsSection(name: "", count: 0, tracker: self)]
            newSections[0].count = fetched.objects.count
        } else {
            for run in runs {
                if let section = oldByName[run.name] {
                    section.count = run.count
                    newSections.append(section)
                } else {
                    let section = FetchedResultsSection(name: run.name, count: run.count, tracker: self)
                    newSections.append(section)
                    created.append(section)
                }
            }
        }
        let kept = Set(newSections.map(ObjectIdentifier.init))
        for section in oldSections where !kept.contains(ObjectIdentifier(section)) { section.count = 0 }

        // The new list keeps the sequence numbers of the objects it had.
        var sequences: [Int] = []
        temporaryResults = []
        for (newPosition, object) in fetched.objects.enumerated() {
            let identity = ObjectIdentifier(object)
            if let sequence = oldSequences[identity] {
                sequences.append(sequence)
            } else {
                sequences.append(nextSequence)
                nextSequence += 1
            }
            if object.objectID.isTemporaryID { temporaryResults.insert(identity) }
            let index = entryIndex[identity] ?? entries.count
            if index == entries.count {
                entries.append(AffectedObject(object: object))
                entryIndex[identity] = index
            }
            entries[index].newPosition = newPosition
            entries[index].newSectionName = names[newPosition]
        }
        list = RankedObjectList(fetched.objects, sequences: sequences)
        sections = newSections
        resultsDidChange()
        for index in entries.indices {
            if let position = entries[index].newPosition { entries[index].newPath = indexPath(ofPosition: position) }
        }
        markMovesAgainstLongestRun(&entries)
        var sectionChanges: [FetchedResultsChanges.SectionChange] = []
        for (index, section) in oldSections.enumerated() where !kept.contains(ObjectIdentifier(section)) {
            sectionChanges.append(.init(section: section, index: index, type: .delete))
        }
        for (index, section) in sections.enumerated() where created.contains(where: { $0 === section }) {
            sectionChanges.append(.init(section: section, index: index, type: .insert))
        }
        return FetchedResultsChanges(sections: sectionChanges, objects: entries)
    }

    /// Marks as moved every object in both lists outside a longest run that keeps its
    /// relative order, or whose section changed.
    private func markMovesAgainstLongestRun(_ entries: inout [AffectedObject]) {
        let common = entries.indices.filter { entries[$0].oldPosition != nil && entries[$0].newPosition != nil }
            .sorted { (entries[$0].newPosition ?? 0) < (entries[$1].newPosition ?? 0) }
        let stable = Set(longestIncreasingRun(common.map { entries[$0].oldPosition ?? 0 }).map { common[$0] })
        for index in common
        where !stable.contains(index) || entries[index].oldSectionName != entries[index].newSectionName {
            entries[index].isMoved = true
        }
    }
}

/// The number of elements of the sorted `values` smaller than `value`.
func lowerBound(of value: Int, in values: [Int]) -> Int {
    var low = 0
    var high = values.count
    while low < high {
        let middle = (low + high) / 2
        if values[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
}

/// The indexes of a longest strictly increasing subsequence of `values`.
///
/// - Complexity: O(n log n).
func longestIncreasingRun(_ values: [Int]) -> [Int] {
    var tails: [Int] = []
    var tailValues: [Int] = []
    var previous = [Int](repeating: -1, count: values.count)
    for (index, value) in values.enumerated() {
        let slot = lowerBound(of: value, in: tailValues)
        if slot > 0 { previous[index] = tails[slot - 1] }
        if slot == tails.count {
            tails.append(index)
            tailValues.append(value)
        } else {
            tails[slot] = index
            tailValues[slot] = value
        }
    }
    var run: [Int] = []
    var current = tails.last ?? -1
    while current >= 0 {
        run.append(current)
        current = previous[current]
    }
    return run.reversed()
}
