// Moving a tree's pages down the file (SPEC.md §2.13): copy-on-write already gives every
// page it copies the lowest free page, so moving the pages at the end of the file is
// copying them, and the path above them, in one transaction. A census of the pages in
// use comes first, to choose how far down the end can move.

/// The pages a state's trees use: every tree, overflow and catalog page.
struct PageCensus {
    /// Every page in use, in walk order.
    var pages: [UInt64] = []
    /// Branch pages among them: an upper bound on the ancestors a move copies besides.
    var branches = 0

    /// The lowest page number from which every page in use can move into `reusable`
    /// pages below it (with `slack` more for the branch pages copied on the way), and the
    /// page count the file can then be cut to; nil when no page can move.
    func relocationBound(reusable: [UInt64], slack: Int) -> (bound: UInt64, end: UInt64)? {
        let used = pages.sorted(by: >)
        let free = reusable.sorted()
        var moved = 0
        // Moving the `moved + 1` highest pages needs that many free pages (plus slack),
        // all below the lowest of them.
        while moved < used.count, moved + slack < free.count, free[moved + slack] < used[moved] {
            moved += 1
        }
        guard moved > 0 else { return nil }
        let highestStaying = moved < used.count ? used[moved] : 0
        return (used[moved - 1], max(highestStaying, free[moved - 1 + slack]) + 1)
    }
}

extension TransactionCore {
    /// Adds the pages of the tree rooted at `root` (0: empty) to `census`.
    func takeCensus(of root: UInt64, into census: inout PageCensus) throws {
        guard root != 0 else { return }
        var stack: [(UInt64, Int)] = [(root, 1)]
        while let (number, depth) = stack.popLast() {
            try checkDescentDepth(depth)
            let page = try self.page(number)
            census.pages.append(number)
            // A page reached twice would be damage (F2); bound the walk by the file.
            guard UInt64(census.pages.count) < (writer?.pageCount ?? snapshot.pageCount) else {
                throw StorageError.corrupt("the trees reach more pages than the file has")
            }
            if page.isLeaf {
                for index in 0..<page.count {
                    let cell = page.leafCell(index)
                    if cell.isOverflow {
                        census.pages += try overflowPages(first: cell.overflowPage, length: cell.valueLength)
                    }
                }
            } else {
                try page.requireBranch()
                census.branches += 1
                for index in 0...page.count { stack.append((page.child(index), depth + 1)) }
            }
        }
    }

    /// Copies every page of `tree` numbered `bound` or above, and every page on the path
    /// to one, to pages the writer allocates; records the new root.
    func relocate(_ tree: TreeState, from bound: UInt64) throws {
        let writer = try requireWriter()
        guard tree.root != 0 else { return }
        let root = try relocateNode(tree.root, from: bound, writer, depth: 1)
        guard root != tree.root else { return }
        tree.root = root
        tree.changed = true
        tree.version += 1
    }

    /// Returns the number page `number` has after the move (itself when nothing under it moved).
    private func relocateNode(_ number: UInt64, from bound: UInt64, _ writer: WriterState, depth: Int) throws
        -> UInt64
    {
        try checkDescentDepth(depth)
        let page = try self.page(number)
        var moves: [(index: Int, page: UInt64)] = []
        if page.isLeaf {
            for index in 0..<page.count {
                let cell = page.leafCell(index)
                guard cell.isOverflow else { continue }
                let first = try relocateOverflow(
                    first: cell.overflowPage, length: cell.valueLength, from: bound, writer)
                if first != cell.overflowPage { moves.append((index, first)) }
            }
        } else {
            try page.requireBranch()
            for index in 0...page.count {
                let child = page.child(index)
                let moved = try relocateNode(child, from: bound, writer, depth: depth + 1)
                if moved != child { moves.append((index, moved)) }
            }
        }
        guard number >= bound || !moves.isEmpty else { return number }
        let copy = writer.writable(page)
        for move in moves {
            if copy.isLeaf {
                let cell = copy.leafCell(move.index)
                copy.setU64(copy.slot(move.index) + LeafCell.headerSize + cell.keyLength, move.page)
            } else {
                copy.setChild(move.index, move.page)
            }
        }
        return copy.number
    }

    /// Copies a whole overflow chain when any page of it lies at `bound` or above; returns
    /// its first page.
    private func relocateOverflow(first: UInt64, length: Int, from bound: UInt64, _ writer: WriterState) throws
        -> UInt64
    {
        let numbers = try overflowPages(first: first, length: length)
        guard numbers.contains(where: { $0 >= bound }) else { return first }
        var next: UInt64 = 0
        for number in numbers.reversed() {
            let copy = writer.writable(try page(number))
            copy.link = next
            next = copy.number
        }
        return next
    }
}
