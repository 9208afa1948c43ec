-- Schema version 10: the device's SM clock, so that a recording exported from a cache carries
-- what the physics guard's arithmetic ceiling needs (sm_count x clock x the per-SM rate).
-- NULL = not known (every device a cache stored before this version, until it is tuned again).

ALTER TABLE devices ADD COLUMN sm_clock_khz INTEGER;
