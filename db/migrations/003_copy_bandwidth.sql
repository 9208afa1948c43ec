-- Schema version 3: the device-to-device copy bandwidth measured at the start of a sweep,
-- kept with the device as the ceiling that results are reported against. NULL = not measured.

ALTER TABLE devices ADD COLUMN copy_gbps REAL;
