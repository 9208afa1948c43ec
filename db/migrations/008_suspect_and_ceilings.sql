-- Schema version 8: the physics guard (issue 24). A trial that passed its check yet ran faster
-- than the GPU can (over its bandwidth or arithmetic ceiling by the guard's margin) gets the
-- status 'suspect', which the trials table's CHECK must allow; ceiling_gbps and ceiling_gflops
-- keep the ceilings each trial was held against (NULL: none known, or an older tiletune).
--
-- SQLite cannot change a CHECK in place, so trials is rebuilt: the new table with every column in
-- the same order, the rows copied with their ids, the old one dropped, the new one renamed, the
-- index made again. Dropping trials deletes its rows first, which cascades to best when foreign
-- keys are on (as CacheDb::open sets them): best is kept aside and put back.

CREATE TEMP TABLE best_before_008 AS SELECT * FROM best;

CREATE TABLE trials_008 (
  id                INTEGER PRIMARY KEY,
  device_id         INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  kernel_id         INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  problem           TEXT NOT NULL,
  params            TEXT NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('ok', 'pruned', 'compile_failed',
                      'launch_failed', 'runtime_fault', 'timeout', 'wrong_result', 'suspect')),
  detail            TEXT NOT NULL DEFAULT '',
  time_ms           REAL,
  mean_ms           REAL,
  min_ms            REAL,
  stddev_ms         REAL,
  samples           INTEGER,
  gbps              REAL,
  gflops            REAL,
  registers         INTEGER,
  shared_bytes      INTEGER,
  spill_bytes       INTEGER,
  occupancy_offline REAL,
  occupancy_driver  REAL,
  compile_ms        REAL,
  measure_ms        REAL,
  created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  energy_mj         REAL,
  power_w           REAL,
  throttled_samples INTEGER,
  cpu_time_s        REAL,
  compile_log       TEXT,
  times_ms          TEXT,
  verify_ms         REAL,
  ceiling_gbps      REAL,
  ceiling_gflops    REAL,
  -- An ok trial is a timed one; everything else may lack a time.
  CHECK (status <> 'ok' OR (time_ms IS NOT NULL AND time_ms > 0)),
  UNIQUE (device_id, kernel_id, problem, params)
);

INSERT INTO trials_008 (id, device_id, kernel_id, problem, params, status, detail, time_ms, mean_ms, min_ms,
                        stddev_ms, samples, gbps, gflops, registers, shared_bytes, spill_bytes, occupancy_offline,
                        occupancy_driver, compile_ms, measure_ms, created_at, energy_mj, power_w, throttled_samples,
                        cpu_time_s, compile_log, times_ms, verify_ms)
  SELECT id, device_id, kernel_id, problem, params, status, detail, time_ms, mean_ms, min_ms, stddev_ms, samples,
         gbps, gflops, registers, shared_bytes, spill_bytes, occupancy_offline, occupancy_driver, compile_ms,
         measure_ms, created_at, energy_mj, power_w, throttled_samples, cpu_time_s, compile_log, times_ms, verify_ms
  FROM trials;

DROP TABLE trials;
ALTER TABLE trials_008 RENAME TO trials;
CREATE INDEX trials_kernel_status ON trials(kernel_id, status);

DELETE FROM best;
INSERT INTO best (device_id, kernel_id, problem, trial_id, time_ms)
  SELECT device_id, kernel_id, problem, trial_id, time_ms FROM best_before_008;
DROP TABLE temp.best_before_008;
