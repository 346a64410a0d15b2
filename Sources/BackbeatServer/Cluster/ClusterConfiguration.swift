/// How one `serve` instance takes part in a group of instances: where the others reach it, and how fast a gone
/// instance stops being asked (docs/scaling.md).
public struct ClusterConfiguration: Sendable {
    /// This process's name in the `instances` table: unique per process start.
    public var instanceID: String
    /// The base URL the other instances reach this one at, e.g. http://backbeat-2:8080 (`--advertise-url`).
    public var advertisedURL: String
    /// How often this instance records itself and reads the others.
    public var heartbeatInterval: Duration
    /// How long a forwarded query may take before this instance answers it itself.
    public var forwardTimeout: Duration

    public init(instanceID: String, advertisedURL: String, heartbeatInterval: Duration = .seconds(1), forwardTimeout: Duration = .seconds(2)) {
        self.instanceID = instanceID
        self.advertisedURL = advertisedURL
        self.heartbeatInterval = heartbeatInterval
        self.forwardTimeout = forwardTimeout
    }

    /// An instance whose last heartbeat is older than this is taken for gone.
    var liveWithin: Duration { heartbeatInterval * 3 }
}
