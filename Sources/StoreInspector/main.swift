// opencoredata-store: look inside an OpenCoreData store, as sqlite3 does for SQLite's.
import Foundation

exit(InspectorCommand.main(Array(CommandLine.arguments.dropFirst())))
