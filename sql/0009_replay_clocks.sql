-- The instant against which the lines of each plain input are judged (an occurred_at more than an hour after it is
-- a future_timestamp): the clock of the input's first replay. A resumed replay and `rebuild` judge every line
-- against it too, so they count exactly the lines the first replay counted. Archived messages carry their own
-- instant (when they were consumed) and need no row here.
CREATE TABLE replay_clocks (
    input     text        PRIMARY KEY,   -- the input's position topic in kafka_offsets: replay:<identity>
    judged_at timestamptz NOT NULL
);
