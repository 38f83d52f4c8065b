// OpenCoreData: Core Data's programming model in pure Swift.
//
// `import OpenCoreData` re-exports Foundation, as `import CoreData` does on Apple
// platforms. Declarations of this module (NSPredicate, NSSortDescriptor,
// NSExpression, ...) shadow Foundation's unusable Linux ones for files that import
// this module alone.
@_exported import Foundation
