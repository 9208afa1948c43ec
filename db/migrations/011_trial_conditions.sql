-- Schema version 11: the conditions a trial was measured under, read through NVML while it was
-- timed (Kernel Tuner's NVMLObserver core_freq, mem_freq and temperature): sm_clock_mhz is the
-- mean SM clock over the kept samples, mem_clock_mhz and temperature_c are read right after the
-- last sample. NULL = not read (no NVML, a trial that was not timed, or a cache older than this).

ALTER TABLE trials ADD COLUMN sm_clock_mhz REAL;
ALTER TABLE trials ADD COLUMN mem_clock_mhz REAL;
ALTER TABLE trials ADD COLUMN temperature_c REAL;
