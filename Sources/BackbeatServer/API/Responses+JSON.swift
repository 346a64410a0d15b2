// The dashboard answers written with `JSONWriter`: the same members, in the same order, as their `Encodable`
// conformances (`ResponseJSONTests` compares the two).

extension StreamsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("series")
        json.beginArray()
        for point in series {
            json.beginObject()
            json.member("period_start", point.period_start)
            json.member("streams", point.streams)
            json.member("skips", point.skips)
            json.member("listening_ms", point.listening_ms)
            json.member("listeners", point.listeners)
            json.endObject()
        }
        json.endArray()
        json.key("totals")
        json.beginObject()
        json.member("streams", totals.streams)
        json.member("skips", totals.skips)
        json.member("listening_ms", totals.listening_ms)
        json.member("listeners", totals.listeners)
        json.endObject()
        json.endObject()
    }
}

extension PlatformsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("platforms")
        json.beginArray()
        for share in platforms {
            json.beginObject()
            json.member("platform", share.platform)
            json.member("streams", share.streams)
            json.member("share", share.share)
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}

extension DemographicsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        for (name, shares) in [("age_ranges", age_ranges), ("genders", genders), ("countries", countries)] {
            json.key(name)
            json.beginArray()
            for share in shares {
                json.beginObject()
                json.member(share.name, share.value)
                json.member("streams", share.streams)
                json.member("share", share.share)
                json.endObject()
            }
            json.endArray()
        }
        json.endObject()
    }
}

extension TopTracksResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("tracks")
        json.beginArray()
        for track in tracks {
            json.beginObject()
            json.member("track_id", track.track_id)
            json.member("streams", track.streams)
            json.member("listeners", track.listeners)
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}

extension RevenueResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("series")
        json.beginArray()
        for point in series {
            json.beginObject()
            json.member("period_start", point.period_start)
            json.member("source", point.source)
            json.member("currency", point.currency)
            json.member("amount", point.amount)
            json.endObject()
        }
        json.endArray()
        json.key("totals")
        CurrencyTotal.write(totals, to: &json)
        json.endObject()
    }
}

extension CurrencyTotal {
    static func write(_ totals: [CurrencyTotal], to json: inout JSONWriter) {
        json.beginArray()
        for total in totals {
            json.beginObject()
            json.member("currency", total.currency)
            json.member("amount", total.amount)
            json.endObject()
        }
        json.endArray()
    }
}

extension SocialResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.key("series")
        json.beginArray()
        for point in series {
            json.beginObject()
            json.member("period_start", point.period_start)
            json.member("platform", point.platform)
            json.member("action", point.action)
            json.member("count", point.count)
            json.endObject()
        }
        json.endArray()
        json.key("totals")
        json.beginArray()
        for total in totals {
            json.beginObject()
            json.member("platform", total.platform)
            json.member("action", total.action)
            json.member("count", total.count)
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }
}

extension SummaryRoute.SummaryResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.beginObject()
        json.member("artist_id", artist_id)
        json.member("as_of", as_of)
        json.member("monthly_listeners", monthly_listeners)
        json.member("streams_28d", streams_28d)
        json.member("streams_prev_28d", streams_prev_28d)
        if let growth_percent { json.member("growth_percent", growth_percent) }
        json.key("revenue_this_month")
        CurrencyTotal.write(revenue_this_month, to: &json)
        json.member("net_followers_28d", net_followers_28d)
        json.endObject()
    }
}
