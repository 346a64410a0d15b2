import BackbeatCore

/// What an answer says of its days that a change of the artist's zone, counted again from the detail kept, could not
/// count again, or left without unique listeners (`RecountGaps`): `counts_unavailable` and `listeners_unavailable`.
enum RecountNotice {
    /// Why some of `days` (the artist's local days, half-open) read short, or nil when all have every count: the
    /// counts made before the change of zone were dropped there, only events consumed since count.
    static func counts(_ gaps: RecountGaps?, days: Range<Int64>, zone: String) -> String? {
        guard let gaps, days.lowerBound < days.upperBound,
              let (before, missing) = gaps.countsUnavailable(in: days.lowerBound...(days.upperBound - 1)) else { return nil }
        var which: [String] = []
        if !missing.isEmpty { which.append(missing.map(date).joined(separator: ", ")) }
        if let before { which.append("the days before \(date(before))") }
        return "counts incomplete for \(which.joined(separator: " and ")): the artist's zone changed to \(zone) and the detail kept "
            + "could not count them in it, so only events consumed since count there (`backbeat artist set-zone` with the archive counts them all again)"
    }

    /// Why unique listeners (or visitors: `kind`) over `days` are missing, or nil when every day of them has its
    /// sketches in the zone.
    static func listeners(_ gaps: RecountGaps?, days: Range<Int64>, zone: String, kind: ListenerScope.Kind = .listeners) -> String? {
        guard let gaps, let from = gaps.listenersFrom, !gaps.listenersCounted(over: days) else { return nil }
        return "unique \(kind.noun) are counted in the artist's zone (\(zone)) from \(date(from)) on: it changed without the archive, "
            + "and the sketches of earlier days were kept per day of the zone before (`backbeat artist set-zone` with the archive counts them again)"
    }

    private static func date(_ day: Int64) -> String { RFC3339.formatDate(CivilDate(daysSinceEpoch: day)) }
}
