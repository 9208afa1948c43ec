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

/* out[i] = a[i] + b[i] + c[i] for an int8 a, an int16 b and a uint16 c, into a uint64 out
 * (mod 2^64): the narrow and wide integer types arrive with their own codes. */
int widen_reference(const tiletune_reference_call* call) {
  const tiletune_buffer* a = tiletune_find_input(call, "a");
  const tiletune_buffer* b = tiletune_find_input(call, "b");
  const tiletune_buffer* c = tiletune_find_input(call, "c");
  tiletune_buffer* out = tiletune_find_output(call, "out");
  uint64_t i;
  if (a == NULL || b == NULL || c == NULL || out == NULL)
    return tiletune_fail(call, "needs inputs a, b, c and output out");
  if (a->type != TILETUNE_INT8 || b->type != TILETUNE_INT16 || c->type != TILETUNE_UINT16 ||
      out->type != TILETUNE_UINT64)
    return tiletune_fail(call, "needs int8 a, int16 b, uint16 c and uint64 out");
  if (a->count < out->count || b->count < out->count || c->count < out->count)
    return tiletune_fail(call, "inputs too short");
  for (i = 0; i < out->count; ++i)
    ((uint64_t*)out->data)[i] =
        (uint64_t)((int64_t)((const int8_t*)a->data)[i] + ((const int16_t*)b->data)[i]) + ((const uint16_t*)c->data)[i];
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
