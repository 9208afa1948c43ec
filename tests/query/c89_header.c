/* Compiled with -std=c90 -pedantic-errors by tests/query/CMakeLists.txt: tiletune.h is plain C89. */
#include "tiletune/tiletune.h"

int tiletune_c89_check(void);
int tiletune_c89_check(void) {
  tiletune_cache* cache = NULL;
  tiletune_result* result = NULL;
  tiletune_status status = tiletune_open("x.db", &cache);
  if (status == TILETUNE_OK) status = tiletune_lookup(cache, "k", "sm_90", "N=1", &result);
  if (status == TILETUNE_OK) status = (tiletune_status)tiletune_result_match_level(result);
  tiletune_result_free(result);
  tiletune_close(cache);
  return (int)status;
}
