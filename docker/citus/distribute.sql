-- Backbeat's tables on Citus (docs/scaling.md, "Past one PostgreSQL"), run once on the coordinator after
-- `backbeat migrate` and before the first `serve`. Not run on this project's machines (no Citus package or Docker
-- engine there): a layout to start from, to be checked on a real cluster.
SELECT citus_set_coordinator_host('citus-coordinator', 5432);
SELECT citus_add_node('citus-worker-1', 5432);
SELECT citus_add_node('citus-worker-2', 5432);

-- Every aggregate is keyed by artist first: each table is sharded by artist_id, all co-located, so one artist's rows
-- of every table are on one worker and a dashboard query (always for one artist) is routed to that worker whole.
-- The cubes and the listener sketches are stored by artist-day (migrations 0017 and 0018), partitioned by month:
-- Citus distributes each month partition with them. A flush's INSERT ... SELECT from its temporary staging table
-- sends each artist-day to its shard.
SELECT create_distributed_table('stream_hourly_days', 'artist_id');
SELECT create_distributed_table('revenue_hourly_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('social_hourly_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_hour_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_platform_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_country_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_demographics_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_track_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('revenue_by_artist_day_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('social_by_artist_day_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_hourly_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_cta_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_interaction_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_section_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_block_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_referrer_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_country_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_funnel_hourly_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_funnel_by_artist_day_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_listeners_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('track_listeners_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_visitors_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_visitors_days', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_partitions', 'artist_id', colocate_with => 'stream_hourly_days');
-- The deltas of the full-dimension tables and of the sketches (migration 0032), by artist like the days they add to.
SELECT create_distributed_table('stream_hourly_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('revenue_hourly_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('social_hourly_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_hourly_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_funnel_hourly_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_listeners_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('track_listeners_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_visitors_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_visitors_deltas', 'artist_id', colocate_with => 'stream_hourly_days');
-- The month rows (migration 0020), by artist like the days they sum.
SELECT create_distributed_table('streams_by_artist_hour_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_platform_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_country_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_demographics_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('streams_by_artist_day_track_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('revenue_by_artist_day_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('social_by_artist_day_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_cta_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_interaction_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_section_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_block_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_referrer_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_by_artist_day_country_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_funnel_by_artist_day_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_listeners_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('track_listeners_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('artist_visitors_months', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_visitors_months', 'artist_id', colocate_with => 'stream_hourly_days');
-- The daily rows retention rolls the hourly detail into (partitioned by month like the cubes).
SELECT create_distributed_table('stream_daily_rolled', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('revenue_daily_rolled', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('social_daily_rolled', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_daily_rolled', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_funnel_daily_rolled', 'artist_id', colocate_with => 'stream_hourly_days');
SELECT create_distributed_table('page_funnel_sessions', 'artist_id', colocate_with => 'stream_hourly_days');

-- Small tables every node reads: offsets (moved in each flush's transaction, so a flush is one distributed
-- transaction, committed on every node it touched with two-phase commit, or on none), the gaps and dedup ids stored with them,
-- tokens, artists' zones, the instances of the group, the bookkeeping of rebuilds, archives and replays, and where
-- the full tables' quarter hours begin.
SELECT create_reference_table('kafka_offsets');
SELECT create_reference_table('offset_gaps');
SELECT create_reference_table('dedup_ids');
SELECT create_reference_table('api_tokens');
SELECT create_reference_table('artist_zones');
SELECT create_reference_table('instances');
SELECT create_reference_table('rebuilds');
SELECT create_reference_table('archive_segments');
SELECT create_reference_table('replay_clocks');
SELECT create_reference_table('rejected_events');
SELECT create_reference_table('retention_horizons');
SELECT create_reference_table('month_rolls');
SELECT create_reference_table('quarter_hour_detail');
