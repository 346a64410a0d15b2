import CRdKafka

/// A failed librdkafka call, with librdkafka's error name and message.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var file: String
    public var line: Int

    public init(code: Int32 = -1, message: String, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    init(_ error: rd_kafka_resp_err_t, context: String, file: String = #fileID, line: Int = #line) {
        self.init(code: error.rawValue, message: "\(context): \(String(cString: rd_kafka_err2str(error)))", file: file, line: line)
    }

    public var description: String { message }
}
