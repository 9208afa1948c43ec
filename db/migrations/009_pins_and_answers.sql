-- Schema version 9: pins, the history of answers and an index for tie sets (issue 24).
--
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
