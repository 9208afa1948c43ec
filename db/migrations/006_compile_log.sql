-- Schema version 6: the compiler's warnings of a trial's compile (issue 11), kept with the trial
-- as plan keeps them with its rows: one warning per line, at most 4 KiB (compile_log_max_bytes).
-- NULL = no warnings, or a trial of an older tiletune. The columns are declared once, with the
-- rest, in tuner/include/tiletune/trial_record.hpp.

ALTER TABLE trials ADD COLUMN compile_log TEXT;
