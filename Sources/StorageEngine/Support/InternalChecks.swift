// Internal checks: the engine's own invariants, asserted while it runs in builds that
// define STORAGE_ENGINE_INTERNAL_CHECKS (Package.swift sets it for debug builds, so
// `swift test` runs with them). Release builds compile every check out: `internalCheck`
// is then an empty inline function whose arguments are never evaluated, and the state
// only checks need (Page.isShared, WriterState.freedThisTransaction) does not exist.
//
// A failed check is a bug in the engine, never bad input: damaged files stay thrown
// `corrupt` errors (P1, W1, M1, V1-V6 in SPEC.md §2). So the checks assert what the code
// guarantees. Two kinds:
//
// - State checks hold whatever the files say: page accesses stay inside the page, a page
//   is unshared when written, the writer changes only pages it owns, the writer's phases,
//   commit frames, published states and the free list's order.
// - Shape checks after a write (key order around the change, separators, fill, the tree
//   walk after a commit) hold when the tree was valid before the write: a file that may
//   be damaged is `verify()`-ed before it is written to (as the hostile-file tests do).
//
// Each check names the SPEC.md invariant it protects; the problems a check looks for are
// found by plain functions returning a description (or nil), which tests call directly.

/// Whether this build checks the engine's invariants as it runs.
#if STORAGE_ENGINE_INTERNAL_CHECKS
    let internalChecksEnabled = true
#else
    let internalChecksEnabled = false
#endif

/// Traps with `message` when `condition` is false, in builds with internal checks; does
/// nothing (and evaluates nothing) otherwise.
@inline(__always)
func internalCheck(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID,
    line: UInt = #line
) {
    #if STORAGE_ENGINE_INTERNAL_CHECKS
        if !condition() { internalCheckFailed(message(), file: file, line: line) }
    #endif
}

/// Traps with the problem `find` reports, in builds with internal checks; does nothing
/// (and evaluates nothing) otherwise.
@inline(__always)
func internalCheck(_ find: @autoclosure () -> String?, file: StaticString = #fileID, line: UInt = #line) {
    #if STORAGE_ENGINE_INTERNAL_CHECKS
        if let problem = find() { internalCheckFailed(problem, file: file, line: line) }
    #endif
}

#if STORAGE_ENGINE_INTERNAL_CHECKS
    /// Traps with a failed check's message. The hottest checks (every page field read)
    /// call it directly from an `#if` block: a condition closure per access would slow
    /// debug builds' tests noticeably.
    @inline(never)
    func internalCheckFailed(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        preconditionFailure("storage engine internal check failed: \(message)", file: file, line: line)
    }
#endif
