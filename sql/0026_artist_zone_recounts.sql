-- A change of an artist's zone without the archive counts its stored days again from the quarter-hour detail
-- (`Store.recountFromDetail`, issue 40). What the detail could not count is recorded here, in the days of the artist's
-- zone, so that answers say so instead of mixing zones; a change with the archive (a whole recount) clears them.
-- counts_from: the first day whose counts were made again (NULL: every day's were); days before it hold none.
ALTER TABLE artist_zones ADD COLUMN IF NOT EXISTS counts_from date;
-- counts_missing: days after counts_from left without counts (a quarter hour the old clock lived twice lands on two
-- of the new clock's days).
ALTER TABLE artist_zones ADD COLUMN IF NOT EXISTS counts_missing date[] NOT NULL DEFAULT '{}';
-- listeners_from: the first day whose unique listeners are counted in this zone (sketches per day of the old zone
-- cannot be moved: they are dropped, and the day of the change is counted only in part).
ALTER TABLE artist_zones ADD COLUMN IF NOT EXISTS listeners_from date;
