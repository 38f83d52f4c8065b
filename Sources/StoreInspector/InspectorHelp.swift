// Help texts of opencoredata-store.

enum InspectorHelp {
    static func overview(_ subcommands: [InspectorSubcommand]) -> String {
        let width = subcommands.map(\.name.count).max() ?? 0
        let lines = subcommands.map {
            "  \($0.name.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.summary)"
        }
        return """
            opencoredata-store: look inside an OpenCoreData store (the default store's file, or a binary store)

            usage: opencoredata-store COMMAND PATH [ARGUMENTS] [OPTIONS]
                   opencoredata-store help COMMAND

            commands:
            \(lines.joined(separator: "\n"))

            The store is read with the model it records; --model PATH.xcdatamodeld reads one written
            before stores recorded their model. Reading commands never create or change a file; a store
            another process has open is read from a snapshot copy. Exit status: 0 success, 1 failure,
            2 usage.
            """
    }

    static let schema = """
        usage: opencoredata-store schema PATH [--json] [--model MODEL]

        The store's entities with their attributes (type, required, indexed, default), relationships
        (destination, to-one or to-many, ordered, delete rule, inverse), indexes and uniqueness
        constraints, and the model version checksum.
        """

    static let query = """
        usage: opencoredata-store query PATH ENTITY [PREDICATE] [--sort KEY[:asc|:desc]]... [--limit N] [--json]

        The objects of ENTITY (and its sub-entities) matching PREDICATE, a format string in
        NSPredicate's syntax ('age > 30 AND name BEGINSWITH[c] "a"'), as a table or as JSON: each
        object's ID URI and every attribute; relationships as object ID URIs.

        example: opencoredata-store query People.store Person 'age >= 18' --sort lastName --limit 20
        """

    static let count = """
        usage: opencoredata-store count PATH ENTITY [PREDICATE]

        How many objects of ENTITY match PREDICATE (all without one).
        """

    static let history = """
        usage: opencoredata-store history PATH [--after NUMBER] [--json]

        The persistent history: each transaction (its number, time, author) with its changes
        (insert, update with the changed properties, delete). --after NUMBER shows only later
        transactions. Stores saved without NSPersistentHistoryTrackingKey have none.
        """

    static let check = """
        usage: opencoredata-store check PATH

        Verifies a default store: the engine's pages, order and counts; every row decodes; every
        index entry has its row and every row its entries; both sides of every relationship.
        Exit status 1 when it finds a problem.
        """

    static let space = """
        usage: opencoredata-store space PATH

        Where a default store's bytes go: pages per tree, how full they are, free pages.
        """

    static let vacuum = """
        usage: opencoredata-store vacuum PATH

        Rewrites a default store compactly, giving free pages back to the file system. The store
        must not be open anywhere else; a crash during the vacuum leaves the old or the new file.
        """

    static let migrate = """
        usage: opencoredata-store migrate PATH --dry-run --model MODEL

        What adding the store with the model file MODEL (.xcdatamodel or .xcdatamodeld) and
        automatic migration would do: each change (entity and property), the objects per entity,
        or the error the migration would throw with its code (exit status 1). The store is not
        changed.
        """
}
