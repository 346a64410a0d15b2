import AsyncHTTPClient
import BackbeatCore
import BackbeatStore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// Plans each dashboard request for an artist once (`QueryService.plan(artist:)`, carried in the context to the
/// route), answers it with the answer kept for its path and query when nothing that answer read changed
/// (`QueryService.keptAnswer`), and, with `forwarding`, sends a request for an artist that this instance's memory does not hold whole to
/// the live instance whose memory does (it owns every partition the artist's messages arrive on, and has loaded
/// them), and returns its answer. The request is answered here, from PostgreSQL plus what this instance consumed,
/// when memory here holds the artist, when no live instance does (its owner is gone and the new one has not loaded
/// yet), when the owner does not answer within `forwardTimeout` or fails, and when the request was itself forwarded
/// (`Backbeat-Forwarded-By`: one hop at most). Auth and rate limits ran here already: the owner is asked with the
/// admin token.
struct ArtistPlanning<Context: PlannedRequestContext>: RouterMiddleware {
    let queries: QueryService
    /// nil: every request is answered here.
    let forwarding: ArtistForwarding?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // A bad or forbidden artist id is refused here, before anything is planned or forwarded.
        let artistID = try artistIDParameter(context)
        let plan = try await queries.plan(artist: artistID)
        // An answer kept for this path and query, still what it read: served before anything is parsed or built.
        if request.method == .get, let kept = queries.keptAnswer(key: request.answerKey, plan: plan) {
            return try EncodedAnswer.response(to: request, kept)
        }
        var context = context
        context.plan = plan
        guard let forwarding, !plan.memoryHoldsAll, request.method == .get, request.headers[HTTPField.Name.forwardedBy] == nil,
              let owner = try await forwarding.owner(of: artistID)
        else {
            return try await next(request, context)
        }
        if let answer = await forwarding.forward(request, to: owner) { return answer }
        return try await next(request, context)
    }
}

/// Where a request for an artist this instance does not hold is sent: the live instance that holds it.
struct ArtistForwarding: Sendable {
    /// The most bytes of an answer taken from the owner.
    static var answerLimit: Int { 32 << 20 }

    let configuration: ClusterConfiguration
    let registry: InstanceRegistry
    let artistPartitions: ArtistPartitionCache
    let memory: LiveMemory
    let metrics: ServiceMetrics
    let adminToken: String
    let logger: Logger

    /// The live instance that holds `artistID` whole, if any (the partitions were read by the plan a moment ago).
    func owner(of artistID: String) async throws -> InstanceRecord? {
        registry.owner(of: try await artistPartitions.partitions(of: artistID))
    }

    /// The owner's answer to `request`, as it gave it; nil when it did not answer in time or failed (5xx).
    func forward(_ request: Request, to owner: InstanceRecord) async -> Response? {
        do {
            let answer = try await ask(owner, request)
            memory.record(.forwarded)
            metrics.recordForward(outcome: "answered")
            return answer
        } catch {
            memory.recordForwardFailure()
            metrics.recordForward(outcome: "failed")
            logger.warning("the instance holding the artist did not answer; answering here", metadata: [
                "instance": "\(owner.id)", "address": "\(owner.address)", "error": "\(error)"])
            return nil
        }
    }

    private func ask(_ owner: InstanceRecord, _ request: Request) async throws -> Response {
        var outgoing = HTTPClientRequest(url: owner.address + request.uri.description)
        outgoing.method = .GET
        outgoing.headers.add(name: "Authorization", value: "Bearer \(adminToken)")
        outgoing.headers.add(name: HTTPField.Name.forwardedBy.rawName, value: configuration.instanceID)
        // The owner may answer in a coding the client accepts (`EncodedAnswer.response`): passed on as it is.
        for accepted in request.headers[values: .acceptEncoding] { outgoing.headers.add(name: "Accept-Encoding", value: accepted) }
        let response = try await registry.client.execute(outgoing, timeout: .nanoseconds(configuration.forwardTimeout.nanoseconds))
        let body = try await response.body.collect(upTo: Self.answerLimit)
        guard response.status.code < 500 else { throw OwnerFailed(status: Int(response.status.code)) }
        var headers = HTTPFields()
        for name in [HTTPField.Name.contentType, .contentEncoding, .vary] {
            if let value = response.headers.first(name: name.rawName) { headers[name] = value }
        }
        headers[HTTPField.Name.answeredBy] = owner.id
        return Response(status: .init(code: Int(response.status.code)), headers: headers, body: .init(byteBuffer: body))
    }

    struct OwnerFailed: Error, CustomStringConvertible {
        var status: Int
        var description: String { "the owner answered \(status)" }
    }
}

extension HTTPField.Name {
    /// Marks a forwarded request, naming the instance that forwarded it.
    static let forwardedBy = HTTPField.Name("Backbeat-Forwarded-By")!
    /// Names the instance that answered a forwarded request.
    static let answeredBy = HTTPField.Name("Backbeat-Answered-By")!
}
