-- Each zone set gets a generation from one sequence (issue 40: a change of zone mid-stream). The highest generation
-- names the zones every writer counts in: a flush or a replay's batch carries the generation it was counted at, and
-- is refused (`ZonesChanged`) when the zones moved on before it committed, so no batch counted in an artist's old
-- zone lands after the change, nor after the recount that `backbeat artist set-zone` makes with it.
CREATE SEQUENCE IF NOT EXISTS artist_zone_generations;
ALTER TABLE artist_zones ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT nextval('artist_zone_generations');
-- Set when the zone was changed keeping the days counted before (`"keep_counted_days": true`, `--keep-counted-days`):
-- events consumed before this instant were counted in the artist's earlier zones, and their days keep those zones'
-- boundaries. NULL: every stored day of the artist is in this zone (a recount with the change clears it).
ALTER TABLE artist_zones ADD COLUMN IF NOT EXISTS counted_in_zone_since timestamptz;
