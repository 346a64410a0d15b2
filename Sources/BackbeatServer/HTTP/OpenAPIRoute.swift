import Hummingbird
import NIOCore

/// `GET /openapi.yaml`: the API's OpenAPI document (docs/openapi.yaml, embedded at build time), byte for byte,
/// without a token: clients generate code from it, gateways and the fuzzer (`scripts/fuzz`) read it.
struct OpenAPIRoute<Context: RequestContext>: Sendable {
    /// The document as built into this binary.
    static var document: [UInt8] { PackageResources.openapi_yaml }

    func add(to router: Router<Context>) {
        let body = ByteBuffer(bytes: Self.document)
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: body))
        }
    }
}
