-- tiletune cache: the whole schema at its latest version, used to create a new database in one
-- step. Must describe the same tables, columns and indexes as migrations/001..N applied in
-- order (test_db checks it); change it only together with a new migration.
-- schema-version: 11

CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT
);

-- One row per GPU, keyed by its UUID; the descriptive columns are refreshed on every sweep.
-- copy_gbps: measured device-to-device copy bandwidth, the ceiling results are compared with.
-- sm_clock_khz: the SM clock; with sm_count the peak arithmetic rate (schema 10). An upsert that
-- does not know a description (NULL) keeps the stored one.
CREATE TABLE devices (
  id             INTEGER PRIMARY KEY,
  uuid           TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  cc_major       INTEGER NOT NULL,
  cc_minor       INTEGER NOT NULL,
  sm_count       INTEGER,
  memory_bytes   INTEGER,
  l2_bytes       INTEGER,
  driver_version INTEGER,
  last_seen      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  copy_gbps      REAL,
  sm_clock_khz   INTEGER
);

-- A kernel version: anything that changes the generated code makes a new row, so trials of an
-- edited source never mix with the old ones. used_seq grows each time a version is tuned (a
-- counter, not a clock, so two upserts in one millisecond still order): the version with the
-- highest used_seq per name is the current one, whose results are served as best.
CREATE TABLE kernels (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  source_hash   TEXT NOT NULL,
  options       TEXT NOT NULL DEFAULT '',
  nvrtc_version TEXT NOT NULL DEFAULT '',
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  used_seq      INTEGER NOT NULL DEFAULT 0,
  UNIQUE (name, source_hash, options, nvrtc_version)
);

-- The problem sizes a kernel version was tuned for ("N=8192;R=3" and the same as JSON), so that
-- a reader can find the nearest measured size without scanning the trials.
CREATE TABLE problems (
  id         INTEGER PRIMARY KEY,
  kernel_id  INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  sizes      TEXT NOT NULL,
  sizes_json TEXT NOT NULL,
  UNIQUE (kernel_id, sizes)
);

-- status: the statuses of tiletune/status.hpp ('suspect': faster than the GPU can, the physics
-- guard). ceiling_gbps, ceiling_gflops: the ceilings the guard held the trial against.
-- sm_clock_mhz, mem_clock_mhz, temperature_c: what NVML read while it was timed (schema 11).
CREATE TABLE trials (
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
  sm_clock_mhz      REAL,
  mem_clock_mhz     REAL,
  temperature_c     REAL,
  -- An ok trial is a timed one; everything else may lack a time.
  CHECK (status <> 'ok' OR (time_ms IS NOT NULL AND time_ms > 0)),
  UNIQUE (device_id, kernel_id, problem, params)
);
CREATE INDEX trials_kernel_status ON trials(kernel_id, status);

-- The fastest ok trial per key. Written with an upsert that only ever lowers time_ms.
CREATE TABLE best (
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  problem   TEXT NOT NULL,
  trial_id  INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  time_ms   REAL NOT NULL,
  PRIMARY KEY (device_id, kernel_id, problem)
);
CREATE INDEX best_trial ON best(trial_id);

-- Compiled cubins (so a second process launches the best config without compiling).
CREATE TABLE cubins (
  key          TEXT PRIMARY KEY NOT NULL,
  arch         TEXT NOT NULL,
  cubin        BLOB NOT NULL,
  lowered_name TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- pins: a config chosen by a person that answers lookups of a kernel and problem for one device
-- (scope 'device', target its UUID), every device of a model ('model', target its name, e.g.
-- "NVIDIA H200") or of an architecture ('architecture', target "sm_90"). Keyed by kernel name,
-- not version, so a pin outlives an edit of the source. problem: its sizes sorted by name
-- ("N=8192;R=3"); params in the space's order where a trial of the kernel has them.
-- Written by `tiletune pin` / `unpin`, copied by `merge` (on the same key the newer pin wins).
CREATE TABLE pins (
  scope      TEXT NOT NULL CHECK (scope IN ('device', 'model', 'architecture')),
  target     TEXT NOT NULL,
  kernel     TEXT NOT NULL,
  problem    TEXT NOT NULL,
  params     TEXT NOT NULL,
  reason     TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (scope, target, kernel, problem)
);

-- The tie set of a key (tiletune/answers.hpp) is the ok trials no slower than the cap above its
-- fastest: one range of this index, so a lookup reads those rows only, not every trial of the key.
CREATE INDEX trials_answer ON trials(device_id, kernel_id, problem, status, time_ms);

-- answer_history: the answer (the pick of the tie set, tiletune/answers.hpp) of a device, kernel
-- version and problem at the end of each run that wrote trials of it. A run is one value of the
-- kernel version's used_seq: each sweep and each merge raises it. Rewritten as trials of the run
-- arrive, so a row holds the run's last answer; consecutive rows with other params are the
-- "winner changes" that `best` and `report` show.
CREATE TABLE answer_history (
  device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  kernel_id INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,
  problem   TEXT NOT NULL,
  run_seq   INTEGER NOT NULL,
  params    TEXT NOT NULL,
  time_ms   REAL NOT NULL,
  ties      INTEGER NOT NULL,
  PRIMARY KEY (device_id, kernel_id, problem, run_seq)
);
