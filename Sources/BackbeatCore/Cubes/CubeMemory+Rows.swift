extension CubeMemory {
    /// Calls `body` with every cell of held cube `cube` as a stored row: the artist, the bucket (hours since the
    /// epoch in an hourly cube, days in a daily one), the values of the cube's (at most three) dimensions and the sums.
    ///
    /// For a layer built from some events these are the events summed to the cube's grain and dimensions. A cell both
    /// sealed and open is given twice, as two rows to be summed.
    public func forEachRow(of cube: Cube, _ body: (_ artistID: String, _ bucket: Int64, _ dimensions: [String], _ sums: CubeRowSums) -> Void) {
        guard let index = Self.cubes.firstIndex(of: cube) else { return }
        let dimensionCount = cube.dimensions.count
        let hourly = cube.grain == .hour
        for (day, bucket) in days {
            bucket.forEachCell(cube: index, artist: nil) { artist, key, measures in
                let values = (0..<dimensionCount).map { symbols[key[$0]] }
                body(symbols[artist], hourly ? day * 24 + Int64(key.hour) : day, values, CubeRowSums(measures, of: cube.dataset))
            }
        }
    }

    /// Every listener sketch held, per artist and day and per track and day, sealed and open parts unioned: for a
    /// flush's in-flight layer, the sketches of the batch it holds.
    public var listeners: (artists: [ArtistDay: HyperLogLog], tracks: [TrackDay: HyperLogLog]) { sketches(\.listeners) }

    /// Every visitor sketch held, per artist and day and per page and day (`TrackDay.trackID` holds the page), as
    /// `listeners`.
    public var visitors: (artists: [ArtistDay: HyperLogLog], tracks: [TrackDay: HyperLogLog]) { sketches(\.visitors) }

    private func sketches(_ family: KeyPath<DayBucket, DaySketches>) -> (artists: [ArtistDay: HyperLogLog], tracks: [TrackDay: HyperLogLog]) {
        var artists: [ArtistDay: HyperLogLog] = [:]
        var tracks: [TrackDay: HyperLogLog] = [:]
        for (day, bucket) in days {
            bucket[keyPath: family].forEach(
                artist: { artists[ArtistDay(artistID: symbols[$0], day: day), default: HyperLogLog()].formUnion($1) },
                keyed: { tracks[TrackDay(artistID: symbols[$0.artist], trackID: symbols[$0.track], day: day), default: HyperLogLog()].formUnion($1) })
        }
        return (artists, tracks)
    }
}

extension CubeRowSums {
    /// A cell's measures as the row of a cube of `dataset` sums them.
    init(_ measures: Measures, of dataset: Dataset) {
        self.init()
        switch dataset {
        case .streams, .funnel: integers = (measures.m0, measures.m1, measures.m2)
        case .revenue:
            integers = (measures.m1, 0, 0)
            amount = Money(micros: measures.amount)
        case .social, .page: integers = (measures.m0, 0, 0)
        }
    }
}
