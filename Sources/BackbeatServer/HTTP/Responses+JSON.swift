// The dashboard answers written with `JSONWriter`: the same members, in the same order, as their `Encodable`
// conformances (`ResponseJSONTests` compares the two).

extension StreamsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("series", series) { json, point in
                json.member("period_start", point.period_start)
                json.member("streams", point.streams)
                json.member("skips", point.skips)
                json.member("listening_ms", point.listening_ms)
                json.member("listeners", point.listeners)
            }
            json.key("totals")
            json.object { json in
                json.member("streams", totals.streams)
                json.member("skips", totals.skips)
                json.member("listening_ms", totals.listening_ms)
                json.member("listeners", totals.listeners)
            }
            if let listeners_unavailable { json.member("listeners_unavailable", listeners_unavailable) }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension PlatformsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("platforms", platforms) { json, share in
                json.member("platform", share.platform)
                json.member("streams", share.streams)
                json.member("share", share.share)
            }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension DemographicsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            for (name, shares) in [("age_ranges", age_ranges), ("genders", genders), ("countries", countries)] as [(StaticString, [DimensionShare])] {
                json.objects(name, shares) { json, share in
                    json.key(named: share.name)
                    json.value(share.value)
                    json.member("streams", share.streams)
                    json.member("share", share.share)
                }
            }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension TopTracksResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("tracks", tracks) { json, track in
                json.member("track_id", track.track_id)
                json.member("streams", track.streams)
                json.member("listeners", track.listeners)
            }
            if let listeners_unavailable { json.member("listeners_unavailable", listeners_unavailable) }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension RevenueResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("series", series) { json, point in
                json.member("period_start", point.period_start)
                json.member("source", point.source)
                json.member("currency", point.currency)
                json.member("amount", point.amount)
            }
            CurrencyTotal.write("totals", totals, to: &json)
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension CurrencyTotal {
    static func write(_ name: StaticString, _ totals: [CurrencyTotal], to json: inout JSONWriter) {
        json.objects(name, totals) { json, total in
            json.member("currency", total.currency)
            json.member("amount", total.amount)
        }
    }
}

extension SocialResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("series", series) { json, point in
                json.member("period_start", point.period_start)
                json.member("platform", point.platform)
                json.member("action", point.action)
                json.member("count", point.count)
            }
            json.objects("totals", totals) { json, total in
                json.member("platform", total.platform)
                json.member("action", total.action)
                json.member("count", total.count)
            }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension SummaryRoute.SummaryResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("artist_id", artist_id)
            json.member("as_of", as_of)
            json.member("monthly_listeners", monthly_listeners)
            json.member("streams_28d", streams_28d)
            json.member("streams_prev_28d", streams_prev_28d)
            if let growth_percent { json.member("growth_percent", growth_percent) }
            CurrencyTotal.write("revenue_this_month", revenue_this_month, to: &json)
            json.member("net_followers_28d", net_followers_28d)
            if let listeners_unavailable { json.member("listeners_unavailable", listeners_unavailable) }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension PageCounts {
    /// The four counts as members of the object being written.
    func writeMembers(to json: inout JSONWriter) {
        json.member("views", views)
        json.member("section_views", section_views)
        json.member("interactions", interactions)
        json.member("cta_clicks", cta_clicks)
        json.member("visitors", visitors)
    }
}

extension PageFunnelStages {
    /// The three stages as members of the object being written.
    func writeMembers(to json: inout JSONWriter) {
        json.member("sessions", sessions)
        json.member("sessions_with_section_view", sessions_with_section_view)
        json.member("sessions_with_cta_click", sessions_with_cta_click)
    }
}

extension PageResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("series", series) { json, point in
                json.member("period_start", point.period_start)
                point.measures.writeMembers(to: &json)
            }
            json.key("totals")
            json.object { json in totals.writeMembers(to: &json) }
            if let visitors_unavailable { json.member("visitors_unavailable", visitors_unavailable) }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension PageSectionsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("sections", sections) { json, section in
                json.member("section_id", section.section_id)
                json.member("views", section.views)
            }
            json.objects("blocks", blocks) { json, block in
                json.member("block_id", block.block_id)
                json.member("interactions", block.interactions)
            }
            json.objects("interactions", interactions) { json, interaction in
                json.member("block_type", interaction.block_type)
                json.member("action", interaction.action)
                json.member("events", interaction.events)
            }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension PageSourcesResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("referrers", referrers) { json, source in
                json.member("referrer", source.referrer)
                json.member("views", source.views)
                json.member("visitors", source.visitors)
            }
            json.objects("countries", countries) { json, source in
                json.member("country", source.country)
                json.member("views", source.views)
                json.member("visitors", source.visitors)
            }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
            if let visitors_unavailable { json.member("visitors_unavailable", visitors_unavailable) }
        }
    }
}

extension PageFunnelResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("series", series) { json, point in
                json.member("period_start", point.period_start)
                point.measures.writeMembers(to: &json)
            }
            json.key("totals")
            json.object { json in totals.writeMembers(to: &json) }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}

extension PageCTAsResponse: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.objects("series", series) { json, point in
                json.member("period_start", point.period_start)
                json.member("action_type", point.action_type)
                json.member("clicks", point.clicks)
            }
            json.objects("totals", totals) { json, total in
                json.member("action_type", total.action_type)
                json.member("clicks", total.clicks)
            }
            if let counts_unavailable { json.member("counts_unavailable", counts_unavailable) }
        }
    }
}
