import Dispatch
import Foundation
import OpenCoreData
import Testing

/// Collects what completion blocks and queued blocks report, from any thread.
private final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    let done = DispatchSemaphore(value: 0)

    func record(_ event: String) { lock.withLock { events.append(event) } }
    var recorded: [String] { lock.withLock { events } }
}

@Suite struct AsynchronousFetchTests {
    @Test func theCompletionRunsOnTheContextsQueueWithTheResults() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 3)
        let context = TestStack.context(coordinator)
        let recorder = Recorder()
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: FaultingStack.employees()) { result in
            let names = context.performAndWait { result.finalResult?.map { $0.name ?? "?" } ?? [] }
            recorder.record("completion \(names.joined(separator: ",")) error=\(result.operationError != nil)")
        }
        let result = try #require(try context.execute(asynchronous) as? NSAsynchronousFetchResult<TEmployee>)
        #expect(result.fetchRequest === asynchronous)
        #expect(result.managedObjectContext === context)
        context.perform {
            recorder.record("queued after")
            recorder.done.signal()
        }
        #expect(recorder.done.wait(timeout: .now() + 10) == .success)
        #expect(recorder.recorded == ["completion E0,E1,E2 error=false", "queued after"])
        let progress = try #require(result.progress)
        #expect(progress.completedUnitCount == progress.totalUnitCount && progress.totalUnitCount == 3)
        #expect(!progress.isCancelled)
    }

    @Test func cancellingBeforeTheFetchRunsReportsUserCancelled() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let context = TestStack.context(coordinator)
        let recorder = Recorder()
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: FaultingStack.employees()) { result in
            let code = (result.operationError as NSError?)?.code ?? 0
            recorder.record("finalResult=\(result.finalResult == nil ? "nil" : "set") code=\(code)")
            recorder.done.signal()
        }
        // The fetch is queued behind this block, so the cancel comes first.
        try context.performAndWait {
            let result = try context.execute(asynchronous) as? NSAsynchronousFetchResult<TEmployee>
            result?.cancel()
            #expect(result?.progress?.isCancelled == true)
        }
        #expect(recorder.done.wait(timeout: .now() + 10) == .success)
        #expect(recorder.recorded == ["finalResult=nil code=\(CocoaError.userCancelled.rawValue)"])
    }

    @Test func cancellingTheCallersProgressCancelsTheFetch() throws {
        let (coordinator, _) = try FaultingStack.populated(companies: 1, employeesPerCompany: 2)
        let context = TestStack.context(coordinator)
        let recorder = Recorder()
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: FaultingStack.employees()) { result in
            recorder.record("code=\((result.operationError as NSError?)?.code ?? 0)")
            recorder.done.signal()
        }
        let parent = Progress(totalUnitCount: 1)
        try context.performAndWait {
            parent.becomeCurrent(withPendingUnitCount: 1)
            _ = try context.execute(asynchronous)
            parent.resignCurrent()
            parent.cancel()
        }
        #expect(recorder.done.wait(timeout: .now() + 10) == .success)
        #expect(recorder.recorded == ["code=\(CocoaError.userCancelled.rawValue)"])
    }

    @Test func aFailingFetchReportsItsErrorToTheCompletion() throws {
        let context = try TestStack.freshContext()
        let recorder = Recorder()
        let asynchronous = NSAsynchronousFetchRequest(fetchRequest: NSFetchRequest<TEmployee>(entityName: "Nope")) {
            result in
            let error = result.operationError as NSError?
            recorder.record("code=\(error?.code ?? 0) results=\(result.finalResult == nil ? "nil" : "set")")
            recorder.done.signal()
        }
        _ = try context.execute(asynchronous)
        #expect(recorder.done.wait(timeout: .now() + 10) == .success)
        #expect(recorder.recorded == ["code=\(NSCoreDataError) results=nil"])
    }
}
