// What `storage-bench --help` and `storage-bench help COMMAND` print.

enum HelpText {
    static let main = """
        storage-bench: OpenCoreData's benchmarks, store tools and soak test.

        USAGE
          storage-bench [WORKLOAD...] [--scale X | --smoke] [--json] [--compare FILE]
          storage-bench COMMAND [ARGUMENTS]

        With no arguments every workload runs at its documented scale. Build it with
        -c release: a debug build's numbers mean nothing (it says so in its banner).

        COMMANDS
        \(commandList)

        OPTIONS (for run, the default command)
          --scale X        multiply every workload's size by X (1 = the documented sizes)
          --smoke          --scale 0.01: every workload in seconds (what CI runs)
          --json           print the run as JSON on stdout (banner, every measurement)
          --compare FILE   show each measurement against an earlier --json run
          --list           list the workloads
          -h, --help       this text; `storage-bench help COMMAND` explains one command

        Results go to stdout as tables: a banner (date, build, machine, load), then one
        row per measurement with its unit and ↑ (higher is better) or ↓ (lower is better).
        Progress goes to stderr, and only when stderr is a terminal.

        EXIT STATUS
          0 success; 1 a workload, check or soak failed; 2 usage error

        EXAMPLES
          swift run -c release storage-bench                   every workload, documented scale
          swift run -c release storage-bench store engine/full-scan
          swift run -c release storage-bench --json > before.json
          swift run -c release storage-bench --compare before.json
          swift run -c release storage-bench soak --seconds 3600 --processes 4
          swift run -c release storage-bench check path/to/Model.store
          swift run -c release storage-bench dry-run path/to/Model.store Model.xcdatamodeld
        """

    static var commandList: String {
        StorageBenchCommand.commands.map { command in
            "  " + command.synopsis.padding(toLength: 30, withPad: " ", startingAt: 0) + command.summary
        }.joined(separator: "\n")
    }

    static let run = """
        storage-bench run [WORKLOAD...] [--scale X | --smoke] [--json] [--compare FILE]
        storage-bench [WORKLOAD...] [OPTIONS]            (the same: run is the default)

        Runs benchmark workloads and prints their measurements. A WORKLOAD is a name or a
        prefix of names (`store` runs store/default, store/in-memory, ...); none means
        all of them. `storage-bench list` names them.

          --scale X        multiply every workload's size by X (1 = the documented sizes,
                           e.g. 1,000,000 rows for engine workloads, 100,000 objects for
                           store workloads)
          --smoke          --scale 0.01
          --json           print the run as one JSON document on stdout instead of tables:
                           {"banner": {...}, "scale": X, "measurements": [{"workload",
                           "label", "value", "unit", "better": "higher"|"lower"|"neither"}],
                           "failures": [...]}
          --compare FILE   add each measurement's earlier value from FILE (a --json run),
                           change = now ÷ before and a verdict: better or worse in the
                           measurement's direction, or "same" within ±5%

        Exit status: 0 all workloads ran, 1 a workload failed (its error on stderr, the
        others still run), 2 usage error.

        Examples:
          storage-bench store/default --scale 0.1
          storage-bench --smoke --json > smoke.json && storage-bench --smoke --compare smoke.json
        """

    static let list = """
        storage-bench list     (or storage-bench --list)

        Lists the workloads, a name and what it measures on each line.
        """

    static let check = """
        storage-bench check PATH

        Verifies the default-store file at PATH: the engine's pages and trees, that every
        row decodes, that every index entry has its row and every row its entries, the
        relationship join trees and external blobs. It opens the file as one more
        process would (PageFileStoreMultiProcessOption): a process holding the store
        alone is waited for up to 5 seconds. A missing PATH is reported, not created.

        Exit status: 0 the store is sound; 1 it has problems (listed) or cannot be read
        (no such file, not a store); 2 usage error.
        """

    static let space = """
        storage-bench space PATH

        Reports where the bytes of the default-store file at PATH go: entries, key and
        value bytes per tree, pages used and their fill.

        Exit status: 0 success; 1 the file cannot be read; 2 usage error.
        """

    static let dryRun = """
        storage-bench dry-run PATH MODEL

        Reports what adding the store at PATH (a default or binary store file) with the
        model MODEL (a .xcdatamodeld package, its current version, or a .xcdatamodel)
        and automatic lightweight migration would do, without changing the store: every
        change (entities and properties added, removed, renamed; properties made
        mandatory or optional; relationships changed), the objects of each entity
        afterwards, or the error opening would throw (134140 naming the entity and the
        property it cannot infer, 134110 for values the new model cannot hold, 134111
        for duplicates under a new uniqueness constraint). Every row is read and
        transformed from a snapshot; the store may be open meanwhile.

        Exit status: 0 the store holds data of the model or would migrate; 1 it would
        not, or the store or the model cannot be read; 2 usage error.
        """

    static let soak = """
        storage-bench soak [--seconds N] [--contexts N] [--processes N] [--seed N]
                           [--policies LIST] [--durability D] [--directory DIR] [--keep]
                           [--report-every N]

        Hammers one default store for N seconds and checks a ledger of acknowledged
        saves against it at the end. In this process: background contexts (one per
        merge policy: error, store trump, object trump, overwrite, rollback, cycling),
        the last of them a parent/child chain, and a view context merging automatically.
        In --processes child processes (storage-bench soak-child) on the same file
        with PageFileStoreMultiProcessOption: the first is killed with SIGKILL at random
        moments and restarted. They insert, update, delete and upsert (a uniqueness
        constraint under trump policies) objects with to-one, one-to-many, ordered and
        many-to-many relationships.

        Every save that returned is recorded. At the end the store must hold every
        acknowledged insert and counter, no object whose delete was acknowledged, both
        sides of every relationship must agree, and verify() must be clean. Memory
        (resident set) and registered objects are sampled every few seconds; objects
        still alive after a context's reset() are reported.

          --seconds N      how long to run (default 30)
          --contexts N     background contexts in this process (default 8)
          --processes N    child processes (default 2; 0 for none)
          --seed N         the seed of every random choice (default: the time); a run
                           prints its seed, and the same seed replays the same choices
                           (thread timing still differs)
          --policies LIST  the merge policies contexts and processes take in turn
                           (default error,store-trump,object-trump,overwrite,rollback)
          --durability D   full (the default), normal or off
          --directory DIR  where the store goes (default: a fresh temporary directory)
          --keep           keep the store file afterwards (its path is printed)
          --report-every N print a status line every N seconds (default 10)

        Prints throughput, conflicts per merge policy, memory and the store file's size
        over time and every violation; with violations the store is kept and
        violations.txt beside it lists them all. Exit status: 0 no violation;
        1 violations (or the soak failed to run); 2 usage error.
        Hours: storage-bench soak --seconds 14400 --report-every 300
        """

    static let probe = """
        storage-bench probe NAME

        Runs one instruction-count probe once: a fixed, seeded operation whose measured
        part runs inside a function named probeMeasured..., so callgrind can count only
        that. Benchmarks/callgrind-probes.sh runs them all. Names:
        \(Probe.all.map { "  " + $0.name }.joined(separator: "\n"))

        Exit status: 0 success; 1 the probe failed; 2 usage error (no or unknown NAME).
        """

    static let help = """
        storage-bench help [COMMAND]

        Prints the overview, or the help of COMMAND (also `storage-bench COMMAND --help`).
        """
}
