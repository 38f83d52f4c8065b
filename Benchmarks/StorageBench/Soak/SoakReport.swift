// What the soak prints when it ends: throughput per writer, conflicts and failed saves
// per merge policy, memory over time, what the store held, and every violation (grouped
// by kind, the first few of each written out), then how to replay the run.
import Foundation

struct SoakReport {
    /// How many violations of one kind are written out; the rest are counted.
    static let listedPerKind = 12

    let soak: Soak
    let seconds: Double
    let census: SoakCensus
    let violations: [SoakViolation]

    init(soak: Soak, seconds: Double, census: SoakCensus) {
        self.soak = soak
        self.seconds = seconds
        self.census = census
        violations = soak.ledger.violations
    }

    func print() {
        Swift.print("")
        Swift.print(throughput())
        Swift.print("")
        Swift.print(policies())
        Swift.print("")
        Swift.print(memory())
        Swift.print("")
        Swift.print(
            "store at the end: \(census.counters) counters, \(grouped(census.owners)) owners, "
                + "\(grouped(census.items)) items, \(census.tags) tags; file and log "
                + String(format: "%.1f MiB", Double(soak.samples.last?.fileBytes ?? 0) / 1_048_576))
        Swift.print("")
        Swift.print(
            "phases: " + soak.phases.map { $0.name + String(format: " %.1f s", $0.seconds) }.joined(separator: ", "))
        Swift.print("")
        Swift.print(violationList())
    }

    private func kind(of name: String) -> String {
        if let child = soak.children.first(where: { $0.name == name }) {
            return child.killable ? "process, killed \(child.kills)×" : "process"
        }
        guard let writer = soak.writers.first(where: { $0.name == name }) else {
            let saves = soak.writers.reduce(0) { $0 + $1.snapshot.saves }
            return "view, merged \(grouped(soak.viewMerges.value)) of \(grouped(saves))"
        }
        if writer.parent != nil { return "parent/child chain" }
        return writer.context.automaticallyMergesChangesFromParent ? "background, auto-merging" : "background"
    }

    private func policy(of name: String) -> (SoakPolicy, counted: Bool)? {
        if let child = soak.children.first(where: { $0.name == name }) { return (child.policy, true) }
        guard let writer = soak.writers.first(where: { $0.name == name }) else { return nil }
        return (writer.policy, writer.counts != nil)
    }

    private func throughput() -> String {
        let table = TextTable(columns: [
            TextTable.Column("writer", width: 6), TextTable.Column("kind", width: 26),
            TextTable.Column("merge policy", width: 22), TextTable.Column("saves", width: 9, .right),
            TextTable.Column("saves/s", width: 8, .right), TextTable.Column("failed", width: 7, .right),
            TextTable.Column("conflicts", width: 9, .right), TextTable.Column("alive after reset", width: 17, .right),
        ])
        var lines = ["THROUGHPUT (\(formatted(seconds)) s)", table.header]
        var total = WriterStatistics()
        for (name, statistics) in soak.allStatistics() {
            total = total + statistics
            let policy = self.policy(of: name)
            let policyName = policy.map { $0.0.title + ($0.counted ? " (counted)" : "") } ?? "—"
            let conflicts =
                policy?.counted == true
                ? grouped(statistics.optimisticConflicts + statistics.constraintConflicts) : "—"
            lines.append(
                table.row([
                    name, kind(of: name), policyName, grouped(statistics.saves),
                    formatted(Double(statistics.saves) / seconds), grouped(statistics.failed), conflicts,
                    "\(grouped(statistics.aliveAfterReset)) of \(grouped(statistics.resetProbes))",
                ]))
        }
        lines.append(
            table.row([
                "total", "", "", grouped(total.saves), formatted(Double(total.saves) / seconds), grouped(total.failed),
                "", "\(grouped(total.aliveAfterReset)) of \(grouped(total.resetProbes))",
            ]))
        lines.append(
            "conflicts: optimistic-locking and constraint conflicts handed to a counting policy (a subclass calling "
                + "super); the built-in singletons' are not seen")
        return lines.joined(separator: "\n")
    }

    private func policies() -> String {
        var lines = ["CONFLICTS AND FAILED SAVES BY MERGE POLICY"]
        for policy in SoakPolicy.allCases {
            let members = soak.allStatistics().filter { self.policy(of: $0.0)?.0 == policy }
            guard !members.isEmpty else { continue }
            let sum = members.map(\.1).reduce(WriterStatistics(), +)
            let counted = members.filter { self.policy(of: $0.0)?.counted == true }.map(\.1)
                .reduce(WriterStatistics(), +)
            var line =
                "  \(policy.title.padding(toLength: 13, withPad: " ", startingAt: 0))"
                + "\(members.map(\.0).joined(separator: ",")): \(grouped(sum.saves)) saves, "
                + "\(grouped(counted.optimisticConflicts)) optimistic-locking and "
                + "\(grouped(counted.constraintConflicts)) constraint conflicts seen by counting policies, "
                + "\(grouped(sum.failed)) failed"
            let failures = sum.failures.sorted { $0.value > $1.value }.prefix(4)
            if !failures.isEmpty {
                line += ": " + failures.map { "\($0.key) ×\(grouped($0.value))" }.joined(separator: "; ")
            }
            lines.append(line)
        }
        if !soak.viewErrors.isEmpty {
            lines.append(
                "  view fetch errors: " + soak.viewErrors.map { "\($0.key) ×\($0.value)" }.joined(separator: "; "))
        }
        return lines.joined(separator: "\n")
    }

    private func memory() -> String {
        let table = TextTable(columns: [
            TextTable.Column("time", width: 6, .right), TextTable.Column("RSS", width: 10, .right),
            TextTable.Column("registered objects", width: 18, .right),
            TextTable.Column("children RSS", width: 12, .right),
            TextTable.Column("children registered", width: 19, .right),
            TextTable.Column("store file", width: 10, .right),
        ])
        var lines = ["MEMORY AND STORE FILE (this process: contexts and view; children: summed)", table.header]
        let samples = soak.samples
        let step = max(1, samples.count / 15)
        for (index, sample) in samples.enumerated() where index % step == 0 || index == samples.count - 1 {
            func mebibytes(_ bytes: UInt64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let seconds = Int(sample.seconds)
            lines.append(
                table.row([
                    String(format: "%d:%02d", seconds / 60, seconds % 60), mebibytes(sample.resident),
                    grouped(sample.registered), mebibytes(sample.childResident), grouped(sample.childRegistered),
                    mebibytes(sample.fileBytes),
                ]))
        }
        return lines.joined(separator: "\n")
    }

    private func violationList() -> String {
        guard !violations.isEmpty else {
            return "no violations: every acknowledged save is in the store, relationships agree, verify() is clean\n"
                + "soak: passed (\(soak.options.replay))"
        }
        var lines = ["VIOLATIONS (\(grouped(violations.count)))"]
        for kind in SoakViolation.Kind.allCases {
            let found = violations.filter { $0.kind == kind }
            guard !found.isEmpty else { continue }
            lines.append("  \(kind.rawValue): \(grouped(found.count))")
            for violation in found.prefix(Self.listedPerKind) { lines.append("    \(violation.message)") }
            if found.count > Self.listedPerKind {
                lines.append("    … \(grouped(found.count - Self.listedPerKind)) more")
            }
        }
        lines.append("soak: FAILED with \(grouped(violations.count)) violations; replay: \(soak.options.replay)")
        return lines.joined(separator: "\n")
    }
}
