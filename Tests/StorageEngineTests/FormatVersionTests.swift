import StorageEngine
import Testing

@Suite struct FormatVersionTests {
    @Test func formatVersionIsPositive() {
        #expect(storageEngineFormatVersion >= 1)
    }
}
