-- Schema version 7: a trial's timing samples and its verification time (issue 21). times_ms is
-- the samples the median time_ms was taken over, in milliseconds in the order taken, as a JSON
-- array of numbers (at most 1000: the first ones, trial_times_max_samples); verify_ms the time of
-- the checked launch, the comparisons with the reference and the host check (verify.command).
-- NULL = not measured (a trial of an older tiletune, or one that did not run). The columns are
-- declared once, with the rest, in tuner/include/tiletune/trial_record.hpp.

ALTER TABLE trials ADD COLUMN times_ms TEXT;
ALTER TABLE trials ADD COLUMN verify_ms REAL;
