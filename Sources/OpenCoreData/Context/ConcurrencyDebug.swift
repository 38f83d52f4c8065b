// Concurrency diagnostics: Core Data's `-com.apple.CoreData.ConcurrencyDebug 1`.
//
// With OPENCOREDATA_CONCURRENCY_DEBUG=1 in the environment, or the launch arguments
// `-com.apple.CoreData.ConcurrencyDebug 1`, every use of a context, and every read or
// change of one of its objects' properties, off the context's queue stops the program
// with a message naming the call — where Core Data stops in
// `__Multithreading_Violation_AllThatIsLeftToUsIsHonor__`. Off by default.
//
// Free when off: the switch is a plain global Bool, statically initialized to false (no
// lazy-initialization check on reads), set once when the first context is created.
// Every check reads it and branches; nothing else runs.
import Foundation

/// Whether concurrency checks run. Written once, before any context exists, under `ConcurrencyDebug.configure`.
nonisolated(unsafe) var concurrencyChecksEnabled = false

/// The switch and the failure of the concurrency diagnostics (see the file comment).
enum ConcurrencyDebug {
    /// The environment variable that turns the checks on ("1", or any positive number).
    static let environmentKey = "OPENCOREDATA_CONCURRENCY_DEBUG"
    /// Core Data's launch argument, followed by a level ("1").
    static let launchArgument = "-com.apple.CoreData.ConcurrencyDebug"

    /// Reads the environment and the launch arguments once per process.
    static let configure: Void = {
        concurrencyChecksEnabled = isRequested(
            environment: ProcessInfo.processInfo.environment, arguments: CommandLine.arguments)
    }()

    /// Whether `environment` or `arguments` ask for the checks.
    static func isRequested(environment: [String: String], arguments: [String]) -> Bool {
        if let value = environment[environmentKey], (Int(value) ?? 0) > 0 { return true }
        if let index = arguments.firstIndex(of: launchArgument), index + 1 < arguments.count {
            return (Int(arguments[index + 1]) ?? 0) > 0
        }
        return false
    }

    /// Stops when the checks are on and `context` is used off its queue by `call`.
    @inline(__always)
    static func check(_ context: NSManagedObjectContext, _ call: @autoclosure () -> String) {
        guard concurrencyChecksEnabled else { return }
        if !context.isOnQueue { violation(context, call()) }
    }

    /// Stops when the checks are on and `object`'s context is used off its queue by `call`.
    /// The queue of a parent or child context counts as the object's own: a child's save
    /// and fault fulfilment read the other's objects there while the first one waits.
    @inline(__always)
    static func check(_ object: NSManagedObject, _ call: @autoclosure () -> String) {
        guard concurrencyChecksEnabled else { return }
        checkObject(object, call)
    }

    private static func checkObject(_ object: NSManagedObject, _ call: () -> String) {
        guard let context = object.managedObjectContext, !context.isOnQueue else { return }
        if let current = NSManagedObjectContext.current, current.isRelated(to: context) { return }
        violation(context, call())
    }

    /// Stops the program with a message naming `call` and the queue it should have run on.
    static func violation(_ context: NSManagedObjectContext, _ call: String) -> Never {
        let queue =
            context.concurrencyType == .mainQueueConcurrencyType
            ? "the main queue (use it from the main thread, or through perform)"
            : "its private queue (use perform or performAndWait)"
        let name = context.name.map { " '\($0)'" } ?? ""
        fatalError(
            "OpenCoreData concurrency violation: \(call) ran on thread \(Thread.current) off the queue of the "
                + "context\(name), which is \(queue) [\(environmentKey) / \(launchArgument) 1]")
    }
}
