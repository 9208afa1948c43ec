/* A user's CPU reference library, as tiletune/reference.h describes one: built by CMake as a
 * shared library (C99, nothing but the header) and loaded by the tests with dlopen. */
#include <tiletune/reference.h>

/* y = a * x + y for the float buffers x and y (y in/out: it holds its initial contents), with
 * a = 0.5 and N elements. */
int saxpy_reference(const tiletune_reference_call* call) {
  const tiletune_buffer* x = tiletune_find_input(call, "x");
  tiletune_buffer* y = tiletune_find_output(call, "y");
  int64_t n = 0;
  uint64_t i;
  if (call->abi != TILETUNE_REFERENCE_ABI) return tiletune_fail(call, "built for another ABI");
  if (x == NULL || y == NULL) return tiletune_fail(call, "needs an input x and an output y");
  if (x->type != TILETUNE_FLOAT || y->type != TILETUNE_FLOAT) return tiletune_fail(call, "x and y must be float");
  if (!tiletune_find_size(call, "N", &n)) return tiletune_fail(call, "needs problem size N");
  if ((uint64_t)n > x->count || (uint64_t)n > y->count) return tiletune_fail(call, "x or y is shorter than N");
  for (i = 0; i < (uint64_t)n; ++i) ((float*)y->data)[i] += 0.5f * ((const float*)x->data)[i];
  return 0;
}

/* Always fails, saying why. */
int failing_reference(const tiletune_reference_call* call) {
  return tiletune_fail(call, "the reference refuses this problem");
}

/* Fails without a message, with status 7. */
int silent_failure(const tiletune_reference_call* call) {
  (void)call;
  return 7;
}
