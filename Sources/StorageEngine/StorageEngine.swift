// PLACEHOLDER owned by the storage engine work (issue 4).
/// The storage engine's on-disk format version.
public let storageEngineFormatVersion = 1
