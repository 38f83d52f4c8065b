import Foundation
import Testing

@testable import OpenCoreData

/// The concurrency diagnostics (Core Data's `-com.apple.CoreData.ConcurrencyDebug 1`): off
/// by default; on, a use off the context's queue stops the process naming the call.
@Suite struct ConcurrencyDebugTests {
    @Test func theSwitchReadsTheEnvironmentAndTheLaunchArgument() {
        #expect(!ConcurrencyDebug.isRequested(environment: [:], arguments: ["app"]))
        #expect(ConcurrencyDebug.isRequested(environment: ["OPENCOREDATA_CONCURRENCY_DEBUG": "1"], arguments: []))
        #expect(!ConcurrencyDebug.isRequested(environment: ["OPENCOREDATA_CONCURRENCY_DEBUG": "0"], arguments: []))
        #expect(
            ConcurrencyDebug.isRequested(
                environment: [:], arguments: ["app", "-com.apple.CoreData.ConcurrencyDebug", "1"]))
        #expect(
            !ConcurrencyDebug.isRequested(environment: [:], arguments: ["app", "-com.apple.CoreData.ConcurrencyDebug"]))
    }

    @Test func offByDefaultAUseOffTheQueueRuns() throws {
        #expect(ProcessInfo.processInfo.environment[ConcurrencyDebug.environmentKey] == nil)
        let context = try TestStack.freshContext()
        let company = TCompany(context: context)
        company.name = "Acme"
        try context.save()
        #expect(company.name == "Acme")
    }

    /// The standard error of an exit test that must stop, as text.
    static func stopMessage(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func saveOffThePrivateQueueStopsNamingTheCall() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("OPENCOREDATA_CONCURRENCY_DEBUG", "1", 1)
            let context = try TestStack.freshContext()
            try context.save()
        }
        let message = Self.stopMessage(result)
        #expect(message.contains("concurrency violation: NSManagedObjectContext.save()"))
        #expect(message.contains("perform or performAndWait"))
    }

    @Test func readingAnObjectOffItsQueueStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("OPENCOREDATA_CONCURRENCY_DEBUG", "1", 1)
            let context = try TestStack.freshContext()
            let company = context.performAndWait {
                let company = TCompany(context: context)
                company.name = "Acme"
                return company
            }
            _ = company.name
        }
        #expect(Self.stopMessage(result).contains("reading a property of Company"))
    }

    @Test func changingAnObjectOffItsQueueStops() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            setenv("OPENCOREDATA_CONCURRENCY_DEBUG", "1", 1)
            let context = try TestStack.freshContext()
            let company = context.performAndWait { TCompany(context: context) }
            company.name = "Acme"
        }
        // The setter reads the object first (firing a fault), so the read is what stops.
        let message = Self.stopMessage(result)
        #expect(message.contains("concurrency violation") && message.contains("Company"))
    }

    /// Everything done the right way runs with the checks on: perform blocks, a child
    /// context's save and faults, the main-queue context through performAndWait, execute().
    @Test func useOnTheQueuesRunsWithChecksOn() async throws {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            setenv("OPENCOREDATA_CONCURRENCY_DEBUG", "1", 1)
            let coordinator = try TestStack.coordinator()
            let context = TestStack.context(coordinator)
            try context.performAndWait {
                let company = TCompany(context: context)
                company.name = "Acme"
                let employee = TEmployee(context: context)
                employee.company = company
                try context.save()
            }
            let child = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
            child.parent = context
            try child.performAndWait {
                let companies = try TestStack.request("Company", TCompany.self).execute()
                companies[0].name = "Acme 2"
                _ = companies[0].employees.first?.name
                try child.save()
            }
            try context.performAndWait { try context.save() }
            let main = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
            main.persistentStoreCoordinator = coordinator
            let names = try main.performAndWait {
                try main.fetch(TestStack.request("Company", TCompany.self)).map(\.name)
            }
            guard names == ["Acme 2"] else { exit(3) }
        }
        #expect(Self.stopMessage(result).isEmpty)
    }
}
