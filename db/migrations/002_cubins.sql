-- Schema version 2: compiled cubins kept in the cache (so a second process launches the best
-- config without compiling), and an index for listing trials by kernel and status.

CREATE TABLE cubins (
  key          TEXT PRIMARY KEY NOT NULL,
  arch         TEXT NOT NULL,
  cubin        BLOB NOT NULL,
  lowered_name TEXT NOT NULL DEFAULT '',
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX trials_kernel_status ON trials(kernel_id, status);
