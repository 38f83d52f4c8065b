// Fuzz targets for the predicate language: random and mutated format strings with
// random arguments must parse or give an error, evaluate or throw — never trap or
// hang; what parses must print a format that parses back to an equal predicate (long
// operator chains, deep NOTs and awkward `%K` keys included).
import Foundation
import OpenCoreData
import TestSupport

extension FuzzTarget {
    /// Parser, printer and evaluator over generated and mutated formats.
    static let predicateLanguage = FuzzTarget(
        name: "predicate", summary: "NSPredicate(format:) parse/print/evaluate on random and mutated formats"
    ) { random in
        var generator = PredicateFuzzGenerator(random: random)
        var format: String
        var arguments: [Any]
        if generator.random.chance(0.25) {
            (format, arguments) = generator.stressFormat()
            if generator.random.chance(0.3) { format = generator.mutate(format) }
        } else {
            format = generator.predicate(generator.random.int(in: 0...4))
            if generator.random.chance(0.6) { format = generator.mutate(format) }
            arguments = (0..<generator.random.int(in: 0...3)).map { _ in generator.argument() }
        }
        random = generator.random
        let start = DispatchTime.now().uptimeNanoseconds
        let predicate = NSPredicate(format: format, argumentArray: arguments)
        if predicate.validationError == nil {
            let printed = predicate.predicateFormat
            let reparsed = NSPredicate(format: printed)
            if !printed.contains("BLOCK"), reparsed.validationError != nil || reparsed != predicate {
                throw FuzzFailure(
                    description: "round trip changed \(format.debugDescription) \(arguments) -> "
                        + "\(printed.debugDescription): \(reparsed.validationError?.message ?? "unequal")")
            }
            for sample in PredicateFuzzGenerator.samples {
                _ = try? predicate.evaluateThrowing(with: sample, substitutionVariables: ["v": 1, "x": "a"])
                _ = predicate.evaluate(with: sample)
            }
        } else {
            _ = predicate.evaluate(with: PredicateFuzzGenerator.samples[0])
        }
        _ = NSExpression(format: format, argumentArray: arguments).expressionValue(with: nil, context: nil)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if elapsed > 2 {
            throw FuzzFailure(description: "took \(elapsed) s on \(format.debugDescription)")
        }
    }
}
