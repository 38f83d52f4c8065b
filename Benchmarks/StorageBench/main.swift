// storage-bench: the project's main job. Runs named workloads at engine and object level
// and prints one table (with no arguments: every workload at the documented scale), and
// holds the store tools (check, space), the soak test and the instruction-count probes.
// `storage-bench --help` explains it all; CLI/Commands.swift dispatches.
import Foundation

exit(StorageBenchCommand.main(Array(CommandLine.arguments.dropFirst())))
