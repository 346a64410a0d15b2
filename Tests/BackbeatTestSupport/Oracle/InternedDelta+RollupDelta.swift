import BackbeatCore

extension InternedDelta {
    /// The same additions keyed by strings, by hour (a key's quarter hours summed).
    public var rollupDelta: RollupDelta {
        var delta = RollupDelta()
        for (cell, counters) in streams.rows {
            let key = StreamKey(
                artistID: values[cell.artist], hour: HourBucket(hoursSinceEpoch: cell.quarter.floorDiv(4)), trackID: values[cell.track],
                platform: values[cell.platform], country: values[cell.country], ageRange: cell.ageRange, gender: cell.gender)
            delta.streams[key, default: StreamCounters()] += counters
        }
        for (cell, counters) in revenue.rows {
            let key = RevenueKey(
                artistID: values[cell.artist], hour: HourBucket(hoursSinceEpoch: cell.quarter.floorDiv(4)), source: cell.source,
                currency: values[cell.currency], platform: values[cell.platform], trackID: values[cell.track])
            delta.revenue[key, default: RevenueCounters()] += counters
        }
        for (cell, count) in social.rows {
            let key = SocialKey(
                artistID: values[cell.artist], hour: HourBucket(hoursSinceEpoch: cell.quarter.floorDiv(4)), platform: values[cell.platform],
                action: values[cell.action])
            delta.social[key, default: 0] += count
        }
        for (cell, count) in page.rows {
            let key = PageKey(
                artistID: values[cell.artist], hour: HourBucket(hoursSinceEpoch: cell.quarter.floorDiv(4)),
                values: Dataset.page.dimensions.dropFirst().map { dimension in
                    guard case .id(let id) = cell.value(of: dimension) else { return "" }
                    return values[id]
                })
            delta.page[key, default: 0] += count
        }
        let listeners = self.listeners
        for (cell, sketch) in listeners.artists {
            delta.artistListeners[ArtistDay(artistID: values[cell.artist], day: cell.day)] = sketch
        }
        for (cell, sketch) in listeners.tracks {
            delta.trackListeners[TrackDay(artistID: values[cell.artist], trackID: values[cell.track], day: cell.day)] = sketch
        }
        let visitors = self.visitors
        for (cell, sketch) in visitors.artists {
            delta.artistVisitors[ArtistDay(artistID: values[cell.artist], day: cell.day)] = sketch
        }
        for (cell, sketch) in visitors.tracks {
            delta.pageVisitors[TrackDay(artistID: values[cell.artist], trackID: values[cell.track], day: cell.day)] = sketch
        }
        delta.rejected = rejected
        return delta
    }
}
