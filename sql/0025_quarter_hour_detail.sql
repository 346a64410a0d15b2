-- Issue 40: the full-dimension tables (`stream_hourly`, `revenue_hourly`, `social_hourly`, named before) keep their rows
-- by quarter hour of the artist's local day, the grain that tiles the days of every zone (every offset in use is a
-- multiple of 15 minutes), so that an artist's rows can be read in any zone's days. Their blocks are written in
-- versions 3 and 4 (`CubeBlock`): version 2's and 1's layouts with the slot of the day (0-95) where those hold the hour.
-- Blocks written before stay as they are: a version 1 or 2 block of a quarter-hour cube reads as rows at the first
-- quarter of their hour. Retention rolls these rows into daily rows as it did hours, so past `--detail-days` nothing
-- grows. The dashboard cubes keep their grains (`streams_by_artist_hour` by hour) and their blocks' versions.

-- A block's rows (any version, `CubeBlock`) of a cube with `slots_per_day` rows a day per key (96 by quarter hour,
-- 24 by hour, 1 by day): each row's slot of the day (null for a daily cube), its `dimensions` values and its
-- `measures` integers (an amount as its micros). A block that is not whole raises an error.
CREATE FUNCTION backbeat_block_slots(stored bytea, slots_per_day integer, dimensions integer, measures integer)
RETURNS TABLE (row_slot smallint, row_values text[], row_sums numeric[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    -- Decompressed once: each get_byte of a compressed value would decompress all of it again.
    block constant bytea := stored || ''::bytea;
    size constant integer := length(block);
    version integer;
    p integer := 1;  -- the next byte's index (from 0)
    n integer;
    v integer;
    b integer;
    shift integer;
    raw numeric;
    scale numeric;
    key numeric := 0;
    timed constant boolean := slots_per_day > 1;
    radix integer;  -- the number of a row's time of the day is below it
    time_scale integer;  -- a slot is the time read times it
    slots smallint[] := '{}';
    slot integer := 0;
    entries integer;
    shared integer;
    rest integer;
    previous bytea;
    dictionary text[] := '{}';  -- every dimension's entries, one dimension after another
    firsts integer[] := '{}';   -- where each dimension's entries start in `dictionary`
    sizes integer[] := '{}';
    vals text[] := '{}';
    sums numeric[] := '{}';
    d integer;
    m integer;
    r integer;
BEGIN
    IF size = 0 OR get_byte(block, 0) NOT IN (1, 2, 3, 4) THEN
        RAISE EXCEPTION 'not a cube block of version 1 to 4';
    END IF;
    version := get_byte(block, 0);
    -- Versions 1 and 2 hold hours, 3 and 4 slots of the cube's grain.
    radix := CASE WHEN version >= 3 THEN slots_per_day ELSE 24 END;
    time_scale := CASE WHEN version >= 3 OR NOT timed THEN 1 ELSE slots_per_day / 24 END;
    -- Each unsigned varint below is read inline, into `v` (an integer) or `raw` (a numeric).
    v := 0; shift := 0;
    LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
    n := v;
    IF version IN (1, 4) AND timed THEN
        FOR r IN 1..n LOOP
            v := 0; shift := 0;
            LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
            slot := slot + v;
            IF slot >= radix THEN
                RAISE EXCEPTION 'a cube block''s time past its day';
            END IF;
            slots[r] := slot * time_scale;
        END LOOP;
    END IF;
    FOR d IN 1..dimensions LOOP
        v := 0; shift := 0;
        LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
        entries := v;
        firsts[d] := cardinality(dictionary) + 1;
        sizes[d] := entries;
        previous := '';
        FOR r IN 1..entries LOOP
            v := 0; shift := 0;
            LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
            shared := v;
            v := 0; shift := 0;
            LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
            rest := v;
            IF shared > length(previous) OR p + rest > size THEN
                RAISE EXCEPTION 'a cube block''s dictionary entry runs past its bytes';
            END IF;
            previous := substring(previous FROM 1 FOR shared) || substring(block FROM p + 1 FOR rest);
            p := p + rest;
            dictionary := dictionary || convert_from(previous, 'UTF8');
        END LOOP;
        IF version IN (1, 4) THEN
            FOR r IN 1..n LOOP
                v := 0; shift := 0;
                LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
                IF v >= entries THEN
                    RAISE EXCEPTION 'a cube block''s index past its dictionary';
                END IF;
                vals[(r - 1) * dimensions + d] := dictionary[firsts[d] + v];
            END LOOP;
        END IF;
    END LOOP;
    IF version IN (2, 3) THEN
        -- Each row's key: the difference from the row before's; the time, then each index, in mixed radix.
        FOR r IN 1..n LOOP
            raw := 0; scale := 1;
            LOOP b := get_byte(block, p); p := p + 1; raw := raw + (b & 127) * scale; EXIT WHEN b < 128; scale := scale * 128; END LOOP;
            key := key + raw;
            raw := key;
            FOR d IN REVERSE dimensions..1 LOOP
                vals[(r - 1) * dimensions + d] := dictionary[firsts[d] + mod(raw, sizes[d])::integer];
                raw := div(raw, sizes[d]);
            END LOOP;
            IF timed THEN
                IF raw >= radix THEN
                    RAISE EXCEPTION 'a cube block''s key past its day';
                END IF;
                slots[r] := raw * time_scale;
            END IF;
        END LOOP;
    END IF;
    FOR m IN 1..measures LOOP
        FOR r IN 1..n LOOP
            raw := 0; scale := 1;
            LOOP b := get_byte(block, p); p := p + 1; raw := raw + (b & 127) * scale; EXIT WHEN b < 128; scale := scale * 128; END LOOP;
            sums[(r - 1) * measures + m] := CASE WHEN mod(raw, 2) = 0 THEN div(raw, 2) ELSE -div(raw + 1, 2) END;
        END LOOP;
    END LOOP;
    IF p <> size THEN
        RAISE EXCEPTION 'a cube block has bytes after its last column';
    END IF;
    RETURN QUERY SELECT CASE WHEN timed THEN slots[i] END, vals[(i - 1) * dimensions + 1 : i * dimensions],
                        sums[(i - 1) * measures + 1 : i * measures]
                 FROM generate_series(1, n) i;
END $$;

-- The decoder of migration 0019, for the cubes that keep hours or days, now the one above.
CREATE OR REPLACE FUNCTION backbeat_block_rows(stored bytea, hourly boolean, dimensions integer, measures integer)
RETURNS TABLE (row_hour smallint, row_values text[], row_sums numeric[])
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT row_slot, row_values, row_sums
    FROM backbeat_block_slots(stored, CASE WHEN hourly THEN 24 ELSE 1 END, dimensions, measures)
$$;

-- The full tables' views keep their columns, `hour` the hour a row's quarter falls in (a key's four quarters are
-- four rows of it), and gain `quarter_start`.
CREATE OR REPLACE VIEW stream_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + (r.row_slot / 4) * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS track_id,
           r.row_values[2] AS platform,
           r.row_values[3] AS country,
           r.row_values[4] AS age_range,
           r.row_values[5] AS gender,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms,
           d.day,
           (d.day::timestamp + r.row_slot * interval '15 minutes') AT TIME ZONE 'UTC' AS quarter_start
    FROM stream_hourly_days d, backbeat_block_slots(d.block, 96, 5, 3) r;

CREATE OR REPLACE VIEW revenue_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + (r.row_slot / 4) * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS source,
           r.row_values[2] AS currency,
           r.row_values[3] AS platform,
           r.row_values[4] AS track_id,
           (r.row_sums[1] * 0.000001)::numeric(38, 6) AS amount,
           r.row_sums[2]::bigint AS events,
           d.day,
           (d.day::timestamp + r.row_slot * interval '15 minutes') AT TIME ZONE 'UTC' AS quarter_start
    FROM revenue_hourly_days d, backbeat_block_slots(d.block, 96, 4, 2) r;

CREATE OR REPLACE VIEW social_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + (r.row_slot / 4) * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS platform,
           r.row_values[2] AS action,
           r.row_sums[1]::bigint AS count,
           d.day,
           (d.day::timestamp + r.row_slot * interval '15 minutes') AT TIME ZONE 'UTC' AS quarter_start
    FROM social_hourly_days d, backbeat_block_slots(d.block, 96, 2, 1) r;

-- The first (local) day whose full-dimension rows are all by quarter hour (NULL: every day), which a read in another
-- zone by quarter hours needs (docs/api.md, "Reading in another zone"): on a database that held no full-dimension
-- rows, every day; else the second day after today's UTC date, the first day of any zone (+14:00 at most) to begin
-- after this migration, so that no row counted by the hour before it (read as its hour's first quarter) is in it.
CREATE TABLE quarter_hour_detail (from_day date);
INSERT INTO quarter_hour_detail
SELECT CASE WHEN EXISTS (SELECT 1 FROM stream_hourly_days) OR EXISTS (SELECT 1 FROM revenue_hourly_days)
                 OR EXISTS (SELECT 1 FROM social_hourly_days)
            THEN (now() AT TIME ZONE 'UTC')::date + 2 END;
