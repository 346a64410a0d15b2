import BackbeatCore

extension CubeMemory {
    /// Adds a string-keyed delta's rows to every held cube, and its sketches, through the cube rows' public way in
    /// (`add(cube:artistID:time:dimensionValues:values:)`); rows of days before `horizonDay` are skipped.
    public mutating func add(_ delta: RollupDelta) {
        for (key, counters) in delta.streams {
            add(row: key, of: .streams, [.integer(counters.streams), .integer(counters.skips), .integer(counters.listeningMs)])
        }
        for (key, counters) in delta.revenue { add(row: key, of: .revenue, [.money(counters.amount), .integer(counters.events)]) }
        for (key, count) in delta.social { add(row: key, of: .social, [.integer(count)]) }
        for (key, count) in delta.page { add(row: key, of: .page, [.integer(count)]) }
        for (key, sketch) in delta.artistListeners {
            addListeners(artistID: key.artistID, trackID: nil, day: key.day, sketch)
        }
        for (key, sketch) in delta.trackListeners {
            addListeners(artistID: key.artistID, trackID: key.trackID, day: key.day, sketch)
        }
        for (key, sketch) in delta.artistVisitors { addVisitors(artistID: key.artistID, pageID: nil, day: key.day, sketch) }
        for (key, sketch) in delta.pageVisitors { addVisitors(artistID: key.artistID, pageID: key.trackID, day: key.day, sketch) }
    }

    /// Adds one full hourly row's `values` (in the order of the dataset's metrics) to every cube of `dataset`.
    private mutating func add(row key: some HourlyRowKey, of dataset: Dataset, _ values: [MetricValue]) {
        for cube in Cube.all where cube.dataset == dataset {
            add(cube: cube, artistID: key.artistID, time: key.hour.start, dimensionValues: cube.dimensions.map(key.value(of:)), values: values)
        }
    }
}
