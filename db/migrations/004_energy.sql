-- Schema version 4: power and energy per trial, measured through NVML while the kernel runs back
-- to back (see tuner/src/gpu/energy.cpp). energy_mj is the energy of one run in millijoules,
-- power_w the mean board power over the measuring window. NULL = not measured (no NVML, a GPU
-- without an energy counter, energy not asked for, or a trial that did not run).

ALTER TABLE trials ADD COLUMN energy_mj REAL;
ALTER TABLE trials ADD COLUMN power_w REAL;
