import Hummingbird
import Synchronization

/// The methods each route path takes (`{name}` segments match any one segment), as the router has them once every
/// route is added: a request for a known path with another method is a 405 with `Allow`, not a 404.
final class RouteMethods: Sendable {
    private let routes = Mutex<[(segments: [Substring], methods: [String])]>([])

    /// Takes the router's routes (`Router.routes`).
    func learn(_ routes: [(method: String, path: String)]) {
        var byPath: [String: [String]] = [:]
        for route in routes { byPath[route.path, default: []].append(route.method) }
        let table = byPath.map { path, methods in (segments: path.split(separator: "/"), methods: methods.sorted()) }
        self.routes.withLock { $0 = table }
    }

    /// The methods `path` is routed for, sorted; empty when no route has that path.
    func methods(for path: String) -> [String] {
        let segments = path.split(separator: "/")
        return routes.withLock { routes in
            Array(Set(routes.filter { Self.matches($0.segments, segments) }.flatMap(\.methods))).sorted()
        }
    }

    private static func matches(_ template: [Substring], _ segments: [Substring]) -> Bool {
        template.count == segments.count && zip(template, segments).allSatisfy { pattern, segment in
            (pattern.hasPrefix("{") && pattern.hasSuffix("}")) || pattern == segment
        }
    }
}
