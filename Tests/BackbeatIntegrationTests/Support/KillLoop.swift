import BackbeatTestSupport
import Foundation

/// The crash loop: `workload` published in `kills + 1` chunks, each once the running instance consumes (a kill before
/// it owns partitions would test nothing); after each chunk but the last, the instance is killed with SIGKILL at a
/// random moment up to 1.5 s later (inside consuming, flushing or committing) and `start` makes the next. Returns the
/// instance running at the end, once every message is flushed.
func publishKillingServe(
    _ workload: Workload, kills: Int, to brokers: String, random: inout TestRandom, start: () throws -> ServiceProcess
) async throws -> ServiceProcess {
    let chunkSize = workload.messages.count / (kills + 1)
    var service = try start()
    for round in 0...kills {
        try await service.waitForLog("partitions assigned")
        let end = round == kills ? workload.messages.count : (round + 1) * chunkSize
        try workload.publish(round * chunkSize..<end, to: brokers)
        guard round < kills else { break }
        try await Task.sleep(for: .milliseconds(Int.random(in: 0...1500, using: &random)))
        service.kill()
        service = try start()
    }
    return service
}
