/* The C API of tiletune's query library: open a tuning cache read-only and look up the best
 * config of a kernel for a device and problem size, from any language that can call C.
 * Plain C (C89 and later, and C++); every function returns a status code or a value and never
 * lets an exception or a crash out. The message of the last failed call on the calling thread
 * is in tiletune_last_error().
 *
 *   tiletune_cache* cache = NULL;
 *   tiletune_result* best = NULL;
 *   if (tiletune_open("/path/tiletune.db", &cache) == TILETUNE_OK &&
 *       tiletune_lookup(cache, "transpose", NULL, "N=8192", &best) == TILETUNE_OK) {
 *     size_t i;
 *     for (i = 0; i < tiletune_result_param_count(best); ++i)
 *       printf("%s=%ld\n", tiletune_result_param_name(best, i), tiletune_result_param_value(best, i));
 *   }
 *   tiletune_result_free(best);
 *   tiletune_close(cache);
 *
 * The result holds params only: the launch geometry is an expression of the search space's
 * YAML, evaluated by the engine's launcher (or by the application) with these params.
 */
#ifndef TILETUNE_TILETUNE_H
#define TILETUNE_TILETUNE_H

#include <stddef.h>

#if defined(_WIN32)
#define TILETUNE_API
#else
#define TILETUNE_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** What a call did. TILETUNE_OK is 0; every other value is a failure or a miss. */
typedef enum tiletune_status {
  TILETUNE_OK = 0,
  TILETUNE_NOT_FOUND = 1,          /**< no tuned config at any match level: use your defaults */
  TILETUNE_INVALID_ARGUMENT = 2,   /**< a null pointer, an empty or unknown kernel, a bad size */
  TILETUNE_NOT_A_CACHE = 3,        /**< the file is not SQLite, or not a tiletune cache */
  TILETUNE_UNSUPPORTED_SCHEMA = 4, /**< written by a newer tiletune, or never initialized */
  TILETUNE_IO_ERROR = 5,           /**< missing or unreadable file, or SQLite failed reading */
  TILETUNE_NO_DEVICE = 6,          /**< the live device was asked for and no driver could tell */
  TILETUNE_OUT_OF_MEMORY = 7,
  TILETUNE_INTERNAL_ERROR = 8
} tiletune_status;

/** How well a result matches the request (see tiletune/query.hpp). Tried in the order PINNED,
 *  EXACT, NEAREST_PROBLEM, SAME_ARCHITECTURE, PORTABLE_DEFAULT, NONE: PINNED ranks first although
 *  its value is the last (the older values stay what they were). */
typedef enum tiletune_match_level {
  TILETUNE_MATCH_EXACT = 0,             /**< this device, this problem */
  TILETUNE_MATCH_NEAREST_PROBLEM = 1,   /**< this device, the nearest measured problem */
  TILETUNE_MATCH_SAME_ARCHITECTURE = 2, /**< another device of the same compute capability */
  TILETUNE_MATCH_PORTABLE_DEFAULT = 3,  /**< best mean relative time over all devices */
  TILETUNE_MATCH_NONE = 4,              /**< nothing found */
  TILETUNE_MATCH_PINNED = 5             /**< a person pinned it (`tiletune pin`): above EXACT */
} tiletune_match_level;

typedef struct tiletune_cache tiletune_cache;   /**< an open cache; thread-safe */
typedef struct tiletune_result tiletune_result; /**< one lookup's answer; immutable */

/** Opens the cache at path read-only. On success *out is the cache (free with tiletune_close);
 *  on failure *out is NULL. */
TILETUNE_API tiletune_status tiletune_open(const char* path, tiletune_cache** out);

/** Opens the default cache ($TILETUNE_DB, $XDG_CACHE_HOME/tiletune/tiletune.db or
 *  ~/.cache/tiletune/tiletune.db). */
TILETUNE_API tiletune_status tiletune_open_default(tiletune_cache** out);

/** Copies the default cache path (with its terminating NUL) into buffer when size is large
 *  enough; *needed (when not NULL) gets the size required. TILETUNE_INVALID_ARGUMENT when the
 *  buffer is too small, TILETUNE_NOT_FOUND when none of the variables is set. */
TILETUNE_API tiletune_status tiletune_default_cache_path(char* buffer, size_t size, size_t* needed);

/** Closes a cache (NULL is allowed). Results already returned stay valid. */
TILETUNE_API void tiletune_close(tiletune_cache* cache);

/** Looks up the best config of kernel.
 *  device_spec: a UUID ("GPU-..."), a compute capability ("sm_90", "9.0"), a device name
 *    ("NVIDIA H200"), or NULL for the live device 0 (read through the CUDA driver, loaded at run
 *    time; TILETUNE_NO_DEVICE when there is none).
 *  sizes: the problem sizes, "N=8192,R=3" (',' or ';' between them; "" for none).
 *  On TILETUNE_OK *out is the result (free with tiletune_result_free); otherwise *out is NULL:
 *  TILETUNE_NOT_FOUND means no level matched (use your defaults), an unknown kernel name is
 *  TILETUNE_INVALID_ARGUMENT. */
TILETUNE_API tiletune_status tiletune_lookup(tiletune_cache* cache, const char* kernel, const char* device_spec,
                                             const char* sizes, tiletune_result** out);

/** As tiletune_lookup, ranking by objective at every match level: "time" (or NULL: the fastest),
 *  "energy" (the lowest energy per run) or "edp" (the lowest energy x time), the last two among
 *  trials whose energy was measured. Another objective name is TILETUNE_INVALID_ARGUMENT. */
TILETUNE_API tiletune_status tiletune_lookup_objective(tiletune_cache* cache, const char* kernel,
                                                       const char* device_spec, const char* sizes,
                                                       const char* objective, tiletune_result** out);

/** Number of params in a result (0 for NULL). */
TILETUNE_API size_t tiletune_result_param_count(const tiletune_result* result);
/** The name of param i, e.g. "TILE"; NULL when i is out of range. Valid until the result is freed. */
TILETUNE_API const char* tiletune_result_param_name(const tiletune_result* result, size_t i);
/** The value of param i; 0 when i is out of range. */
TILETUNE_API long tiletune_result_param_value(const tiletune_result* result, size_t i);
/** The value of the param called name into *value: TILETUNE_OK, or TILETUNE_NOT_FOUND. */
TILETUNE_API tiletune_status tiletune_result_param(const tiletune_result* result, const char* name, long* value);
/** The match level (TILETUNE_MATCH_NONE for NULL). */
TILETUNE_API tiletune_match_level tiletune_result_match_level(const tiletune_result* result);
/** Median time in ms of the measurement the config came from; -1 when there is none
 *  (portable default). */
TILETUNE_API double tiletune_result_time_ms(const tiletune_result* result);
/** Energy per run in mJ of the measurement it came from, for the energy and edp objectives;
 *  -1 otherwise (time objective, portable default, or NULL). */
TILETUNE_API double tiletune_result_energy_mj(const tiletune_result* result);
/** How many configs of its device and problem tie with the fastest within the noise (the answer
 *  is the pick rule's choice among them, see tiletune/answers.hpp): 1 is a clear winner; 0 where
 *  no tie set was computed (portable default, pinned, the energy and edp objectives, NULL). */
TILETUNE_API size_t tiletune_result_tie_count(const tiletune_result* result);
/** The tie set's spread, (slowest tied time - fastest) / fastest, e.g. 0.003; 0 without one. */
TILETUNE_API double tiletune_result_tie_spread(const tiletune_result* result);
/** The fastest median of the tie set in ms (tiletune_result_time_ms is the answer's own); -1
 *  without a tie set. */
TILETUNE_API double tiletune_result_fastest_ms(const tiletune_result* result);
/** The answer's headroom in percent: 100 x (1 - its share of its ceiling, the larger of its GB/s
 *  over the bandwidth ceiling and its GFLOP/s over the arithmetic one; tiletune/physics.hpp), e.g.
 *  4.2; -1 where the cache has no ceiling or rate for it (no `metrics:` in the space, a cache
 *  before schema 8, pinned, portable default, NULL). */
TILETUNE_API double tiletune_result_headroom_percent(const tiletune_result* result);
/** Which ceiling bounds the answer: "bandwidth" or "compute"; "" without a headroom. */
TILETUNE_API const char* tiletune_result_bound(const tiletune_result* result);
/** For TILETUNE_MATCH_PINNED: what the pin names, "device", "model" or "architecture" ("" for
 *  other levels). */
TILETUNE_API const char* tiletune_result_pin_scope(const tiletune_result* result);
/** For TILETUNE_MATCH_PINNED: the reason given with the pin ("" when none). */
TILETUNE_API const char* tiletune_result_pin_reason(const tiletune_result* result);
/** The measured problem it came from, "N=8192;R=3" ("" for the portable default). */
TILETUNE_API const char* tiletune_result_problem(const tiletune_result* result);
/** The name of the device it was measured on ("" for the portable default). */
TILETUNE_API const char* tiletune_result_device_name(const tiletune_result* result);
/** The canonical params text, "TILE=32;BLOCK_ROWS=8;PAD=1". */
TILETUNE_API const char* tiletune_result_params_text(const tiletune_result* result);
/** Frees a result (NULL is allowed). */
TILETUNE_API void tiletune_result_free(tiletune_result* result);

/** The stored trials as a JSON array of objects, one per trial (the fields of `tiletune show
 *  --format json`: kernel, device, device_uuid, problem, params, status, detail, best, current,
 *  and each measured column of the trial column table, time_ms ... power_w, throttled_samples,
 *  cpu_time_s; an unmeasured one is absent), ordered by kernel, device, problem, then fastest first.
 *  kernel, device (a UUID or name) and status filter when not NULL; only trials of each kernel's
 *  current version unless all_versions is non-zero. On TILETUNE_OK *json is a NUL-terminated
 *  UTF-8 string to free with tiletune_string_free; otherwise it is NULL. It is valid UTF-8 JSON
 *  whatever the cache holds: a byte that is not UTF-8 is written as U+FFFD, and a trial with such
 *  bytes says how many in "invalid_utf8_bytes" (absent when none); control characters are
 *  escaped. */
TILETUNE_API tiletune_status tiletune_trials_json(tiletune_cache* cache, const char* kernel, const char* device,
                                                  const char* status, int all_versions, char** json);
/** Frees a string returned by the library (NULL is allowed). */
TILETUNE_API void tiletune_string_free(char* text);

/** A static description of a status, e.g. "not a tiletune cache". */
TILETUNE_API const char* tiletune_status_string(tiletune_status status);
/** The message of the last call on this thread that did not return TILETUNE_OK ("" after a
 *  successful call). Valid until the next tiletune call on this thread. */
TILETUNE_API const char* tiletune_last_error(void);
/** A static name of a match level, e.g. "nearest_problem". */
TILETUNE_API const char* tiletune_match_level_string(tiletune_match_level level);

#ifdef __cplusplus
}
#endif

#endif /* TILETUNE_TILETUNE_H */
