import Hummingbird

/// Counts every request by route pattern, method and status, and records its latency
/// (`backbeat_http_requests_total`, `backbeat_http_request_duration_seconds`). Outermost, so that it sees the
/// status of errors too.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        let status: Int
        do {
            let response = try await next(request, context)
            status = response.status.code
            record(request, context, status: status, since: started)
            return response
        } catch {
            status = (error as? any HTTPResponseError)?.status.code ?? 500
            record(request, context, status: status, since: started)
            throw error
        }
    }

    private func record(_ request: Request, _ context: Context, status: Int, since started: ContinuousClock.Instant) {
        // The route's pattern, never the path itself: paths carry artist ids and would make unbounded series.
        metrics.recordRequest(route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status,
                              duration: ContinuousClock.now - started)
    }
}
