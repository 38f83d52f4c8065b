// The in-memory free list of the newest committed state (its on-disk forms are the
// checkpoint's chain and the log's free records, SPEC.md §2.2). Kept split by when each
// page may be reused (F1), so starting a write transaction costs O(pages that became
// reusable), not O(free pages).

/// Free pages: reusable now, and held until snapshots and the durable meta allow.
struct FreeList {
    /// Reusable now, largest first (`popLast` takes the smallest, keeping the file compact).
    var reusable: [UInt64] = []
    /// Held pages first written after the durable meta, ascending `freedAt`, from `bornStart`.
    private var born: [FreeEntry] = []
    private var bornStart = 0
    /// Other held pages, ascending `freedAt`, from `oldStart`.
    private var old: [FreeEntry] = []
    private var oldStart = 0

    init() {}

    /// A free list holding `entries` (none reusable until ``release(threshold:snapshotThreshold:reuseLogBorn:)``).
    init(entries: [FreeEntry]) {
        for entry in entries.sorted(by: { $0.freedAt < $1.freedAt }) {
            if entry.bornInLog { born.append(entry) } else { old.append(entry) }
        }
    }

    /// The number of free pages, reusable or held.
    var count: Int { reusable.count + born.count - bornStart + old.count - oldStart }

    /// Every entry; reusable pages are reported as freed at 0.
    var entries: [FreeEntry] {
        var result = reusable.map { FreeEntry(page: $0, freedAt: 0) }
        result.append(contentsOf: born[bornStart...])
        result.append(contentsOf: old[oldStart...])
        return result
    }

    /// Moves the held pages F1 now allows into ``reusable``.
    mutating func release(threshold: UInt64, snapshotThreshold: UInt64, reuseLogBorn: Bool) {
        let firstOld = oldStart
        while oldStart < old.count && old[oldStart].freedAt <= threshold { oldStart += 1 }
        let bornLimit = reuseLogBorn ? max(threshold, snapshotThreshold) : threshold
        let firstBorn = bornStart
        while bornStart < born.count && born[bornStart].freedAt <= bornLimit { bornStart += 1 }
        // The released entries are read in place (a small commit releases a few pages per
        // transaction: gathering them into an array of their own cost its regrowth).
        let released = oldStart - firstOld + bornStart - firstBorn
        if released > 16 {
            reusable.reserveCapacity(reusable.count + released)
            for entry in old[firstOld..<oldStart] { reusable.append(entry.page) }
            for entry in born[firstBorn..<bornStart] { reusable.append(entry.page) }
            reusable.sort(by: >)
        } else if released > 0 {
            for index in firstOld..<oldStart { insertReusable(old[index].page) }
            for index in firstBorn..<bornStart { insertReusable(born[index].page) }
        }
        if oldStart > 64 && oldStart * 2 > old.count {
            old.removeFirst(oldStart)
            oldStart = 0
        }
        if bornStart > 64 && bornStart * 2 > born.count {
            born.removeFirst(bornStart)
            bornStart = 0
        }
    }

    /// Inserts `page` into ``reusable``, keeping it largest first.
    private mutating func insertReusable(_ page: UInt64) {
        var low = 0
        var high = reusable.count
        while low < high {
            let middle = (low + high) / 2
            if reusable[middle] > page { low = middle + 1 } else { high = middle }
        }
        reusable.insert(page, at: low)
        internalCheck(
            (low == 0 || reusable[low - 1] > page) && (low + 1 == reusable.count || reusable[low + 1] < page),
            "F1: free page \(page) is reusable twice, or out of order")
    }

    /// Records the committed pages transaction `transaction` freed.
    mutating func append(freed: [UInt64], at transaction: UInt64, bornInLog: [Bool]) {
        internalCheck(
            (self.born.last?.freedAt ?? 0) <= transaction && (old.last?.freedAt ?? 0) <= transaction,
            "F1: pages freed by transaction \(transaction) after later ones")
        for (page, born) in zip(freed, bornInLog) {
            let entry = FreeEntry(page: page, freedAt: transaction, bornInLog: born)
            if born { self.born.append(entry) } else { old.append(entry) }
        }
    }
}
