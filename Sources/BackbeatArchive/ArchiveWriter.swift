import BackbeatCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes the archive of `serve --archive-dir`: per topic partition, segments of zstd-compressed `ArchiveLine`s.
///
/// A segment is `<topic>/<partition>/<from offset, 20 digits>_<YYYY-MM-DDTHH>.ndjson.zst` below the directory. While
/// written it carries the suffix `.open`; it is sealed (fsynced, renamed, directory fsynced) when its hour ends, when
/// it outgrows `segmentBytes`, when its partition's run breaks (another consumer moved the offset), or at shutdown.
///
/// Each flush appends one zstd frame per partition and fsyncs it *before* PostgreSQL commits; the segment's length
/// is stored in that transaction (`ArchiveSegmentPosition`). After a commit that failed `rolledBack()` cuts the frames
/// off again; after one whose outcome is unknown (its answer lost) `settle` keeps or cuts them by the lengths
/// PostgreSQL stored; after a crash `recover` cuts every leftover open segment to its stored length and seals it. So
/// a segment holds exactly the messages whose effect is in the aggregates: no gap, no duplicate line.
///
/// `@unchecked Sendable` because it is not thread-safe itself: its owner serialises every call (the ingest service
/// keeps it in a `Mutex` and only its flush loop calls it).
public final class ArchiveWriter: @unchecked Sendable {
    public let directory: URL
    public let segmentBytes: Int64
    public static let openSuffix = ".open"

    private final class Segment {
        let name: String
        let handle: FileHandle
        let run: ArchiveRun
        let hour: Int64
        var bytes: Int64 = 0
        var nextOffset: Int64
        var committedBytes: Int64 = 0
        var committedNextOffset: Int64

        init(name: String, handle: FileHandle, run: ArchiveRun, hour: Int64) {
            self.name = name
            self.handle = handle
            self.run = run
            self.hour = hour
            self.nextOffset = run.fromOffset ?? 0
            self.committedNextOffset = nextOffset
        }
    }

    private var segments: [TopicPartition: Segment] = [:]

    public init(directory: URL, segmentBytes: Int64) throws {
        self.directory = directory
        self.segmentBytes = segmentBytes
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Names (sealed form) of the open segments a previous process left behind.
    public func leftovers() throws -> [String] {
        archiveFiles(below: directory).filter { $0.hasSuffix(Self.openSuffix) }.map { String($0.dropLast(Self.openSuffix.count)) }
    }

    /// Cuts each leftover open segment to its committed length (`committed[name]`; missing: nothing committed,
    /// the file is removed) and seals it. Returns how many were sealed and removed.
    public func recover(committed: [String: Int64]) throws -> (sealed: Int, removed: Int) {
        var result = (sealed: 0, removed: 0)
        for name in try leftovers() {
            let openURL = directory.appendingPathComponent(name + Self.openSuffix)
            let length = committed[name] ?? 0
            if length == 0 {
                try FileManager.default.removeItem(at: openURL)
                result.removed += 1
                continue
            }
            let handle = try FileHandle(forUpdating: openURL)
            try handle.truncate(atOffset: UInt64(length))
            try handle.synchronize()
            try handle.close()
            try seal(name)
            result.sealed += 1
        }
        return result
    }

    /// Appends each part's archive lines as one zstd frame to its partition's open segment and makes it durable;
    /// returns the positions to store in the flush's transaction.
    public func append(_ parts: [FlushBatch.Part], now: Timestamp) throws -> [ArchiveSegmentPosition] {
        var positions: [ArchiveSegmentPosition] = []
        for part in parts where !part.archive.isEmpty {
            let partition = part.topicPartition
            if let segment = segments[partition], segment.committedBytes > 0, (part.expectedOffset ?? .min) < segment.committedNextOffset {
                // Its messages are archived and committed already (a flush whose answer was lost, retried before its
                // partition was sought again): PostgreSQL stored an offset past them (or, for no expected offset, one
                // at all), so this flush meets an offset conflict for it; nothing is appended.
                continue
            }
            if let segment = segments[partition], segment.nextOffset != part.expectedOffset || segment.bytes != segment.committedBytes {
                // The run broke (the stored offset moved under us): this segment ends here.
                try close(partition)
            }
            var lines: [UInt8] = []
            let segment: Segment
            if let existing = segments[partition] {
                segment = existing
            } else {
                segment = try create(ArchiveRun(topicPartition: partition, fromOffset: part.expectedOffset), now: now)
                ArchiveLine.appendHeader(segment.run, to: &lines)
            }
            lines += part.archive
            let frame = try ZstdFrameWriter.frame(of: lines)
            segment.handle.write(Data(frame))
            try segment.handle.synchronize()
            segment.bytes += Int64(frame.count)
            segment.nextOffset = part.newOffset
            positions.append(ArchiveSegmentPosition(
                name: segment.name, topicPartition: partition, fromOffset: segment.run.fromOffset,
                nextOffset: segment.nextOffset, bytes: segment.bytes))
        }
        return positions
    }

    /// The flush committed: what was appended is now part of the record (`sealFinished` then seals what is done).
    public func committed() {
        for segment in segments.values {
            segment.committedBytes = segment.bytes
            segment.committedNextOffset = segment.nextOffset
        }
    }

    /// The flush did not commit: cuts the frames it appended off again (its messages come back in a later flush).
    public func rolledBack() throws {
        for (partition, segment) in segments where segment.bytes != segment.committedBytes {
            try cutBack(partition, segment)
        }
    }

    /// The segments holding frames of a flush whose outcome is not known yet (neither `committed` nor `rolledBack`):
    /// its transaction failed in a way that may have come after PostgreSQL committed it (a lost answer).
    public var unsettled: [String] {
        segments.values.filter { $0.bytes != $0.committedBytes }.map(\.name)
    }

    /// Settles the `unsettled` segments by the lengths PostgreSQL stored with the last committed flush (`stored[name]`;
    /// missing: none): a segment whose stored length is its length committed with the flush, and keeps its frames;
    /// any other is cut back to what was committed before. Returns the partitions whose frames were kept (empty: the
    /// flush had not committed).
    @discardableResult
    public func settle(stored: [String: Int64]) throws -> [TopicPartition] {
        var landed: [TopicPartition] = []
        for (partition, segment) in segments where segment.bytes != segment.committedBytes {
            if stored[segment.name] == segment.bytes {
                segment.committedBytes = segment.bytes
                segment.committedNextOffset = segment.nextOffset
                landed.append(partition)
            } else {
                try cutBack(partition, segment)
            }
        }
        return landed.sorted()
    }

    /// Cuts `segment` back to its committed frames (removes it if it has none).
    private func cutBack(_ partition: TopicPartition, _ segment: Segment) throws {
        if segment.committedBytes == 0 {
            try segment.handle.close()
            try FileManager.default.removeItem(at: directory.appendingPathComponent(segment.name + Self.openSuffix))
            segments[partition] = nil
            return
        }
        try segment.handle.truncate(atOffset: UInt64(segment.committedBytes))
        try segment.handle.seekToEnd()
        try segment.handle.synchronize()
        segment.bytes = segment.committedBytes
        segment.nextOffset = segment.committedNextOffset
    }

    /// Seals segments that are full, whose hour has passed, or (when `keeping` is given) whose partition is no
    /// longer in it. Only fully committed segments are sealed.
    public func sealFinished(now: Timestamp, keeping: Set<TopicPartition>?) throws {
        let hour = now.microseconds.floorDiv(3_600_000_000)
        for (partition, segment) in segments where segment.bytes == segment.committedBytes {
            let finished = segment.bytes >= segmentBytes || segment.hour != hour || keeping.map { !$0.contains(partition) } == true
            if finished { try close(partition) }
        }
    }

    /// Seals every committed segment (at shutdown, after the last flush) and drops uncommitted frames.
    public func closeAll() throws {
        try rolledBack()
        for partition in Array(segments.keys) { try close(partition) }
    }

    // MARK: - Files

    private func create(_ run: ArchiveRun, now: Timestamp) throws -> Segment {
        let hour = now.microseconds.floorDiv(3_600_000_000)
        let from = String(run.fromOffset ?? 0)
        let hourText = RFC3339.format(Timestamp(seconds: hour * 3600)).prefix(13)  // YYYY-MM-DDTHH
        let name = "\(run.topicPartition.topic)/\(run.topicPartition.partition)/"
            + String(repeating: "0", count: max(0, 20 - from.count)) + from + "_\(hourText).ndjson.zst"
        let url = directory.appendingPathComponent(name + Self.openSuffix)
        let sealedURL = directory.appendingPathComponent(name)
        guard !FileManager.default.fileExists(atPath: sealedURL.path), !FileManager.default.fileExists(atPath: url.path) else {
            throw ArchiveError(path: sealedURL.path, position: 0, "archive segment exists already (is another instance writing to this archive directory?)")
        }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw ArchiveError(path: url.path, position: 0, "cannot create archive segment")
        }
        let segment = Segment(name: name, handle: try FileHandle(forWritingTo: url), run: run, hour: hour)
        segments[run.topicPartition] = segment
        return segment
    }

    private func close(_ partition: TopicPartition) throws {
        guard let segment = segments.removeValue(forKey: partition) else { return }
        try segment.handle.close()
        if segment.committedBytes == 0 {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(segment.name + Self.openSuffix))
        } else {
            try seal(segment.name)
        }
    }

    /// Renames `name.open` to `name` and fsyncs the directory so the rename survives a crash.
    private func seal(_ name: String) throws {
        let sealedURL = directory.appendingPathComponent(name)
        try FileManager.default.moveItem(at: directory.appendingPathComponent(name + Self.openSuffix), to: sealedURL)
        let folder = open(sealedURL.deletingLastPathComponent().path, O_RDONLY)
        if folder >= 0 {
            fsync(folder)
            Glibc.close(folder)
        }
    }

    /// Paths (relative to `root`) of every file below it, sorted.
    private func archiveFiles(below root: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: root.path) else { return [] }
        var files: [String] = []
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append(path)
            }
        }
        return files.sorted()
    }
}
