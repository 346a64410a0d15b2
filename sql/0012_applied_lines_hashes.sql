-- A plain input is named by its first mebibyte of content (`InputIdentity`), no longer by a pass over all of it:
-- each write of a replay stores, with the input's position, the 128-bit XXH3 hash of the lines up to it
-- (`AppliedLinesHash`), so that a later run checks that the lines it skips are the ones that were applied. Kafka
-- partitions have none. Positions stored before have none either: they were named by the hash of their input's
-- whole content, and a replay still looks them up under that name.
ALTER TABLE kafka_offsets ADD COLUMN applied_lines_hash text;
