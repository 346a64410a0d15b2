-- Dedup ids are hashed a 64-bit word at a time since version 2 of their stored form (DedupWindow+Storage.swift):
-- hashes of version 1 (FNV-1a, byte by byte) cannot be compared with them, so their rows are deleted and each
-- partition's window starts empty at the first start after the upgrade, as on the first upgrade to dedup
-- (docs/events.md, "Upgrading").
DELETE FROM dedup_ids WHERE get_byte(ids, 0) = 1;
