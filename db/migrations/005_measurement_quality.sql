-- Schema version 5: how trustworthy a trial's time is (issue 13). throttled_samples counts the
-- samples discarded because the SM clock was throttled while they ran; cpu_time_s is the median
-- CPU-side wall time of one sample's launch + synchronize, in seconds. NULL = not measured (a
-- trial of an older tiletune, or one that did not run). The columns are declared once, with the
-- rest, in tuner/include/tiletune/trial_record.hpp.

ALTER TABLE trials ADD COLUMN throttled_samples INTEGER;
ALTER TABLE trials ADD COLUMN cpu_time_s REAL;
