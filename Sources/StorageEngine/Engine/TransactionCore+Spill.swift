// Bounded write-transaction memory (SPEC.md §2.4 step 7a). Past its spill limit the
// writer writes the dirty pages it is not using into their slots of the page file —
// slots no committed state and no snapshot reaches (F1), exactly the ones a direct commit
// (§2.4 step 7) would write — and reads a page back when the transaction needs it again.
// A transaction that spilled commits directly, whose sync covers the spilled writes.

extension TransactionCore {
    /// Spills when the writer holds as many dirty pages as its limit allows. Called at the
    /// start of a put or removal, when no page of the previous operation is in use except
    /// the path the append fast path keeps.
    @inline(__always)
    func spillIfNeeded(_ writer: WriterState) throws {
        if writer.dirty.count >= writer.spillAt { try spill(writer) }
    }

    /// Writes the dirty leaf and overflow pages not on the writer's path (and the branch
    /// pages too, when they alone hold half the limit) into their slots of the page file,
    /// sealed as a commit seals them, and drops them from memory.
    @inline(never)
    func spill(_ writer: WriterState) throws {
        var kept = Set<ObjectIdentifier>()
        for page in writer.pathPages { kept.insert(ObjectIdentifier(page)) }
        var branches = 0
        for page in writer.dirty.values where page.kindByte == PageKind.branch.rawValue { branches += 1 }
        let spillsBranches = branches >= writer.spillLimit / 2
        var victims: [Page] = []
        victims.reserveCapacity(writer.dirty.count)
        for page in writer.dirty.values where !kept.contains(ObjectIdentifier(page)) {
            if spillsBranches || page.kindByte != PageKind.branch.rawValue { victims.append(page) }
        }
        if !victims.isEmpty {
            victims.sort { $0.number < $1.number }
            for page in victims {
                internalCheck(page.keyOrderProblem)
                page.seal(transaction: writer.transaction)
            }
            var next = 0
            try store.writeToPageFile(victims.map(\.number)) { number, destination in
                internalCheck(victims[next].number == number, "§2.4: spilled page \(number) out of order")
                destination.copyMemory(from: victims[next].bytes, byteCount: geometry.pageSize)
                next += 1
            }
            for page in victims {
                writer.dirty[page.number] = nil
                writer.spilled.insert(page.number)
            }
        }
        // What could not be spilled (the path, branch pages) does not make every later
        // operation try again: the next spill waits for half a limit of new pages.
        writer.spillAt = max(writer.spillLimit, writer.dirty.count + writer.spillLimit / 2)
    }

    /// Reads back page `number`, which this transaction spilled, as a dirty page again: the
    /// transaction may change it in place, and writes it again (spilling or committing).
    @inline(never)
    func reloadSpilled(_ number: UInt64, _ writer: WriterState) throws -> Page {
        let pageSize = geometry.pageSize
        let page = Page(size: pageSize, zeroed: false)
        let read = try store.dataFile.read(
            into: UnsafeMutableRawBufferPointer(start: page.bytes, count: pageSize), at: number * UInt64(pageSize))
        guard read == pageSize else {
            throw StorageError.corrupt("page \(number): the page file ends before the page this transaction spilled")
        }
        try page.validate(number: number, maximumTransaction: writer.transaction)
        guard page.transaction == writer.transaction else {
            throw StorageError.corrupt(
                "page \(number): spilled by transaction \(writer.transaction), read back from \(page.transaction)")
        }
        writer.spilled.remove(number)
        writer.dirty[number] = page
        return page
    }
}
