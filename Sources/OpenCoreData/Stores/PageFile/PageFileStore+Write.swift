// The one engine write transaction a change of the store's rows runs in: a save or a
// batch request, through a PageFileWriter, with the store's metadata written in the same
// transaction when it changed.

extension PageFileStore {
    /// Runs `body` with a writer over one engine write transaction, and writes the store's
    /// metadata in the same transaction when it changed. Nothing is written when it throws.
    ///
    /// - Throws: what `body` throws, and the engine's errors, translated under
    ///   `NSPersistentStoreSaveError`.
    func writeInOneTransaction<Result>(_ body: (inout PageFileWriter) throws -> Result) throws -> Result {
        let (catalog, codec) = (self.catalog, self.codec)
        do {
            let result = try openDatabase().write { transaction in
                var writer = PageFileWriter(transaction: transaction, catalog: catalog, codec: codec)
                let result = try body(&writer)
                if needsMetadataWrite { try writeMetadata(in: transaction, includingRecord: metadataRecordChanged) }
                return result
            }
            didWriteMetadata()
            return result
        } catch {
            throw translate(error, NSPersistentStoreSaveError)
        }
    }
}
