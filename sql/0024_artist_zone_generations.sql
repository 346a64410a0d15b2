-- Each zone set gets a generation from one sequence (issue 40: a change of zone mid-stream). The highest generation
-- names the zones every writer counts in: a flush or a replay's batch carries the generation it was counted at, and
-- is refused (`ZonesChanged`) when the zones moved on before it committed, so no batch counted in an artist's old
-- zone lands after the change, nor after the recount that `backbeat artist set-zone` makes with it.
CREATE SEQUENCE IF NOT EXISTS artist_zone_generations;
ALTER TABLE artist_zones ADD COLUMN IF NOT EXISTS generation bigint NOT NULL DEFAULT nextval('artist_zone_generations');
