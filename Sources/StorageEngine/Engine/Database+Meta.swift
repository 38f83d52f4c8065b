// The meta slots (SPEC.md §2.1 M1-M4): which slot open uses, how a damaged newest slot
// is told from a torn or never-written one, the checkpoint's meta writes, and settling
// the slots of a file opened over damage or written by an older build.
//
// The rule: once a checkpoint's new meta is synced, the checkpoint writes the older slot
// again with the new meta's transaction in its successor field (M3). So a valid slot
// whose other slot is invalid, and whose successor lies above its own transaction, proves
// that the other slot held a newer, durable meta: damage, not a torn write (a torn write
// is of the slot being written, and no slot names it until it is synced). Open then
// refuses unless the log still reaches that transaction, or the caller asks for the older
// state (M4).

/// What page 0 holds: the meta open uses and what the other slot says.
struct MetaChoice {
    /// The valid slot with the highest transaction (M1).
    var state: CommitState
    var slot: Int
    var pageSize: Int
    /// The chosen slot's successor field (M3; 0: none).
    var successor: UInt64
    var other: Other

    /// The slot not chosen.
    enum Other {
        case valid(CommitState, successor: UInt64)
        case neverWritten
        case invalid(String)
    }

    /// The newer meta the chosen slot says the other slot held, when the other slot no
    /// longer holds a valid meta (M3): that meta is lost.
    var lostTransaction: UInt64? {
        if case .valid = other { return nil }
        return successor > state.transaction ? successor : nil
    }

    /// The older slot's state, when it is valid but does not name the chosen meta as its
    /// successor (an older build wrote the file, or a crash fell between the checkpoint's
    /// two meta writes): the next checkpoint names it (M3).
    var olderWithoutSuccessor: CommitState? {
        guard case .valid(let older, let successor) = other, older.transaction < state.transaction,
            successor != state.transaction
        else { return nil }
        return older
    }

    /// What the other slot holds, for messages.
    var otherDescription: String {
        switch other {
        case .valid(let older, _): return "slot \(1 - slot) holds transaction \(older.transaction)"
        case .neverWritten: return "slot \(1 - slot) is all zeros"
        case .invalid(let problem): return problem
        }
    }
}

/// What the next checkpoint must write into the meta slots besides a new meta.
enum MetaRepair: Equatable {
    case none
    /// The older slot, valid, does not name the current meta as its successor.
    case nameSuccessor(older: CommitState)
    /// The handle opened the older state over a damaged newest slot (M4): both slots get
    /// the current meta, and the log a new generation if it was set aside.
    case replaceDamaged
}

extension Database {
    /// Reads page 0: the valid meta slot with the highest transaction id (M1) and what the
    /// other slot says (M3).
    /// - Throws: ``StorageError`` `corrupt` when no slot is valid or the slots disagree on
    ///   the page size, `unsupportedFormat` for a newer format.
    static func readMeta(_ file: any StorageFile, path: String) throws -> MetaChoice {
        var header = [UInt8](repeating: 0, count: 2 * MetaSlot.size)
        let read = try header.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        guard read > 0 else { throw StorageError.corrupt("\(path) is empty: not a database") }
        header.removeSubrange(read...)
        var slots: [MetaSlot.Decoded] = []
        for slot in 0..<2 {
            let decoded = MetaSlot.decode(header, slot: slot)
            if case .unsupported(let problem) = decoded {
                throw StorageError(.unsupportedFormat, "\(path): \(problem)")
            }
            slots.append(decoded)
        }
        func other(_ decoded: MetaSlot.Decoded) -> MetaChoice.Other {
            switch decoded {
            case .valid(let state, _, let successor): return .valid(state, successor: successor)
            case .neverWritten: return .neverWritten
            case .invalid(let problem): return .invalid(problem)
            case .unsupported(let problem): return .invalid(problem)
            }
        }
        switch (slots[0], slots[1]) {
        case (.valid(let first, let firstSize, let firstSuccessor), .valid(let second, let secondSize, let successor)):
            guard firstSize == secondSize else { throw StorageError.corrupt("meta slots disagree on the page size") }
            if second.transaction > first.transaction {
                return MetaChoice(
                    state: second, slot: 1, pageSize: secondSize, successor: successor, other: other(slots[0]))
            }
            return MetaChoice(
                state: first, slot: 0, pageSize: firstSize, successor: firstSuccessor, other: other(slots[1]))
        case (.valid(let state, let pageSize, let successor), _):
            return MetaChoice(state: state, slot: 0, pageSize: pageSize, successor: successor, other: other(slots[1]))
        case (_, .valid(let state, let pageSize, let successor)):
            return MetaChoice(state: state, slot: 1, pageSize: pageSize, successor: successor, other: other(slots[0]))
        default:
            let problems = slots.enumerated().map { slot, decoded -> String in
                if case .invalid(let problem) = decoded { return problem }
                return "slot \(slot) is all zeros"
            }
            throw StorageError.corrupt(
                "\(path): no valid meta slot (\(problems.joined(separator: "; "))): not an OpenCoreData database, "
                    + "or one whose header page is damaged; check the path, or restore the file from a backup")
        }
    }

    /// Whether opening `choice` with `recovery` would silently lose a newer state (M4): the
    /// chosen slot names a successor the log does not reach, or the log began after the
    /// chosen meta. Nil when nothing is lost.
    static func olderStateProblem(_ choice: MetaChoice, _ recovery: WriteAheadLog.Recovery, path: String) -> String? {
        let older = choice.state.transaction
        let reached = recovery.state.transaction
        if let base = recovery.newerLogBase {
            return "\(path): the log begins after transaction \(base), but the newest valid meta slot (slot "
                + "\(choice.slot)) holds transaction \(older) (\(choice.otherDescription)): the newest meta slot is "
                + "damaged, and opening would lose transactions \(older + 1) through \(base) and every one in the log"
        }
        guard let lost = choice.lostTransaction, reached < lost else { return nil }
        let reach = reached == older ? "the log holds nothing after it" : "the log reaches transaction \(reached)"
        return "\(path): meta slot \(1 - choice.slot), which held transaction \(lost) (slot \(choice.slot) records "
            + "it as its successor), is damaged (\(choice.otherDescription)); slot \(choice.slot) holds transaction "
            + "\(older) and \(reach), so opening would lose transactions \(reached + 1) through \(lost)"
    }

    /// Refuses a recovery that would lose a newer state, unless the options accept it.
    /// Returns the repair the next checkpoint owes the meta slots.
    static func checkRecoveredState(
        _ choice: MetaChoice, _ recovery: WriteAheadLog.Recovery, path: String, options: Options
    ) throws -> MetaRepair {
        if let problem = olderStateProblem(choice, recovery, path: path) {
            guard options.recoverToOlderState else {
                throw StorageError.corrupt(
                    problem + ". Open with Options.recoverToOlderState to accept that loss and open transaction "
                        + "\(recovery.state.transaction), or restore the file from a backup")
            }
            return .replaceDamaged
        }
        if let older = choice.olderWithoutSuccessor { return .nameSuccessor(older: older) }
        return .none
    }

    /// Checkpoint steps 4-5 and M3: writes `state` into the slot not holding the current
    /// meta (M2) and syncs; then writes the older slot again, its state unchanged, naming
    /// the new meta as its successor, and syncs.
    func writeMeta(_ state: CommitState) throws {
        internalCheck(
            state.transaction >= checkpointed.transaction,
            "§2.5: a meta for transaction \(state.transaction) after one for \(checkpointed.transaction)")
        let older = checkpointed
        let slot = 1 - metaSlot
        try writeMetaSlot(slot, state, successor: 0)
        metaSlot = slot
        checkpointed = state
        metaRepair = .none
        if older.transaction < state.transaction {
            try writeMetaSlot(1 - slot, older, successor: state.transaction)
        }
    }

    private func writeMetaSlot(_ slot: Int, _ state: CommitState, successor: UInt64) throws {
        let meta = MetaSlot.encode(state, pageSize: geometry.pageSize, slot: slot, successor: successor)
        try meta.withUnsafeBytes { try dataFile.write($0, at: UInt64(slot * MetaSlot.size)) }
        if options.durability != .off { try dataFile.synchronize(.data) }
    }

    /// A checkpoint with no new state (a close): writes what ``metaRepair`` owes, so that
    /// a later damage of the newest slot is detected (M3) and a file opened over damage
    /// opens without the option next time (M4). An I/O error poisons the handle.
    func settleMetaSlots() throws {
        let repair = metaRepair
        guard repair != .none else { return }
        do {
            switch repair {
            case .none:
                break
            case .nameSuccessor(let older):
                try writeMetaSlot(1 - metaSlot, older, successor: checkpointed.transaction)
            case .replaceDamaged:
                if !log.hasHeader {
                    // The log of the lost state was set aside: start a generation after the
                    // recovered meta, so that its frames never validate again.
                    try store.resetLog {
                        try log.reset(baseTransaction: checkpointed.transaction, salt: saltGenerator.next())
                    }
                    if options.durability != .off { try log.file.synchronize(.data) }
                }
                try writeMetaSlot(1 - metaSlot, checkpointed, successor: 0)
                try writeMetaSlot(metaSlot, checkpointed, successor: 0)
            }
            metaRepair = .none
        } catch {
            throw poisonHandle(error)
        }
    }
}
