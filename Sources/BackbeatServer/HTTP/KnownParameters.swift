import BackbeatCore
import Hummingbird
import HummingbirdCore

extension Request {
    /// Refuses a query string that names a parameter outside `known` with a 400 naming it: a misspelt
    /// `granulariy=week` would otherwise be ignored and answered by day. Answers the parameters, parsed once.
    @discardableResult
    func requireKnownParameters(_ known: [String]) throws -> FlatDictionary<Substring, Substring> {
        let parameters = uri.queryParameters
        for (name, _) in parameters where !known.contains(String(name)) {
            throw APIError(unknownParameter: String(name), known: known)
        }
        return parameters
    }
}

extension APIError {
    /// A 400 for a query parameter or body field the endpoint does not take.
    init(unknownParameter name: String, known: [String]) {
        let takes = known.isEmpty ? "no parameters" : known.joined(separator: ", ")
        self.init(.badRequest, code: QueryError.Code.unknownParameter.rawValue, message: "unknown parameter \(name); this endpoint takes \(takes)")
    }
}

/// A field of a JSON object body that its type does not have.
struct UnknownField: Error {
    /// The field's name, with the path of the object holding it ("order_by.x").
    var name: String
    /// The fields that object takes.
    var known: [String]
}

extension Decoder {
    /// Throws `UnknownField` for the first key of this JSON object outside `known` (`object` names a nested one).
    func refuseUnknownFields(_ known: [String], in object: String? = nil) throws {
        for key in try container(keyedBy: AnyKey.self).allKeys where !known.contains(key.stringValue) {
            throw UnknownField(name: object.map { "\($0).\(key.stringValue)" } ?? key.stringValue, known: known)
        }
    }
}

/// Any key of a JSON object.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
