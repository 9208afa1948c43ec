/* example_c_lookup: the best config of a kernel from a tiletune cache, through the C API.
 *
 *   example_c_lookup DB KERNEL SIZES [DEVICE]
 *     DB      the cache file, or "-" for the default ($TILETUNE_DB, ~/.cache/tiletune/tiletune.db)
 *     KERNEL  e.g. transpose
 *     SIZES   e.g. "N=8192" or "M=4096,K=1024"
 *     DEVICE  a UUID ("GPU-..."), "sm_90", "9.0" or a name; the live device when left out
 *
 * Prints NAME=VALUE lines and the match level. Exit status: 0 found, 2 nothing tuned (the
 * program would use its own defaults), 1 an error.
 */
#include <stdio.h>
#include <string.h>

#include "tiletune/tiletune.h"

int main(int argc, char** argv) {
  tiletune_cache* cache = NULL;
  tiletune_result* best = NULL;
  tiletune_status status;
  const char* device = NULL;
  size_t i;
  size_t count;

  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: %s DB KERNEL SIZES [DEVICE]\n", argv[0]);
    return 1;
  }
  if (argc == 5) device = argv[4];

  status = strcmp(argv[1], "-") == 0 ? tiletune_open_default(&cache) : tiletune_open(argv[1], &cache);
  if (status != TILETUNE_OK) {
    fprintf(stderr, "cannot open the cache: %s: %s\n", tiletune_status_string(status), tiletune_last_error());
    return 1;
  }

  status = tiletune_lookup(cache, argv[2], device, argv[3], &best);
  if (status == TILETUNE_NOT_FOUND) {
    printf("no tuned config for %s (%s): using the defaults\n", argv[2], tiletune_last_error());
    tiletune_close(cache);
    return 2;
  }
  if (status != TILETUNE_OK) {
    fprintf(stderr, "lookup failed: %s: %s\n", tiletune_status_string(status), tiletune_last_error());
    tiletune_close(cache);
    return 1;
  }

  count = tiletune_result_param_count(best);
  for (i = 0; i < count; ++i)
    printf("%s=%ld\n", tiletune_result_param_name(best, i), tiletune_result_param_value(best, i));
  printf("# match: %s", tiletune_match_level_string(tiletune_result_match_level(best)));
  if (tiletune_result_time_ms(best) >= 0.0)
    printf(", measured %.4f ms on %s for %s", tiletune_result_time_ms(best), tiletune_result_device_name(best),
           tiletune_result_problem(best));
  printf("\n");

  tiletune_result_free(best);
  tiletune_close(cache);
  return 0;
}
