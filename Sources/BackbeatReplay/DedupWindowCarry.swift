import BackbeatCore
import Synchronization

/// The dedup windows one replay carries from input to input (nil: none loaded yet).
final class DedupWindowCarry: Sendable {
    private let state = Mutex<[TopicPartition: DedupWindow]?>(nil)

    var carried: [TopicPartition: DedupWindow]? { state.withLock { $0 } }

    func carry(_ windows: [TopicPartition: DedupWindow]) {
        state.withLock { $0 = windows }
    }
}
