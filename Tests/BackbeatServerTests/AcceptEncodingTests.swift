@testable import BackbeatServer
import Testing

/// `Accept-Encoding` as RFC 9110 reads it: named codings, weights, `*`, case, several fields.
@Suite struct AcceptEncodingTests {
    @Test(arguments: [
        (["zstd"], true),
        (["gzip, deflate, br, zstd"], true),  // what Chromium sends over HTTPS
        (["ZSTD"], true),
        (["gzip", "zstd;q=0.5"], true),  // two fields
        ([" gzip ,\tzstd ; q=1 "], true),
        (["zstd;q=0"], false),
        (["zstd;q=0.000"], false),
        (["zstd; Q=0"], false),
        (["gzip, deflate, br"], false),
        ([], false),
        (["*"], true),
        (["*;q=0"], false),
        (["zstd;q=0, *"], false),  // named refused: `*` does not bring it back
        (["*, zstd;q=0"], false),
        (["gzip;q=1, *;q=0.1"], true),
        (["zstd;q=2"], false),  // not a weight: not accepted
        (["zstd;q=abc"], false),
        (["zstd;q=0.1234"], false),
        (["xzstd, zstdx"], false),
        ([",,;,="], false),
    ] as [([String], Bool)])
    func zstdIsAcceptedAsTheFieldsSay(fields: [String], accepted: Bool) {
        #expect(AcceptEncoding.accepts("zstd", in: fields) == accepted, "\(fields)")
    }
}
