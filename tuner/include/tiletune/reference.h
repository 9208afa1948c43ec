/* tiletune/reference.h: the C ABI of a CPU reference in a shared library.
 *
 * A space may check a kernel against a function of your own:
 *
 *   verify: {reference: {library: ./libmyref.so, function: saxpy_reference}}
 *
 * The GPU worker loads the library with dlopen once per problem, hands the function the
 * problem sizes, the inputs (as the GPU saw them, downloaded after they were generated) and
 * the outputs (sized as the kernel's, holding their initial contents: zeros, or the data of an
 * in/out buffer), and compares what the function wrote with every config's outputs. `tiletune
 * plan` and `tune` load the library and look the function up before any GPU work.
 *
 *   #include <tiletune/reference.h>
 *   int saxpy_reference(const tiletune_reference_call* call) {
 *     const tiletune_buffer* x = tiletune_find_input(call, "x");
 *     tiletune_buffer* y = tiletune_find_output(call, "y");
 *     if (!x || !y || x->type != TILETUNE_FLOAT) return tiletune_fail(call, "needs float x and y");
 *     ...
 *     return 0;
 *   }
 *
 * Build it as a shared library (cc -shared -fPIC ref.c -o libmyref.so). The function runs in
 * the worker process: a crash there is a crash of the worker (the trial is a runtime_fault).
 * Plain C99; nothing else to link.
 */
#ifndef TILETUNE_REFERENCE_H
#define TILETUNE_REFERENCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this ABI, in tiletune_reference_call.abi. */
#define TILETUNE_REFERENCE_ABI 1

/* Element types, as the space's `type:` names them. Half is IEEE binary16, passed as its bits.
 * The numbers are fixed: types added later get the next ones (a library written for fewer
 * types should refuse a buffer whose type it does not know, with tiletune_fail). */
typedef enum tiletune_element_type {
  TILETUNE_FLOAT = 0,  /* float */
  TILETUNE_DOUBLE = 1, /* double */
  TILETUNE_INT = 2,    /* int: int32_t */
  TILETUNE_UINT = 3,   /* uint: uint32_t */
  TILETUNE_INT64 = 4,  /* int64: int64_t */
  TILETUNE_UINT8 = 5,  /* uint8: uint8_t */
  TILETUNE_HALF = 6,   /* half: uint16_t bits */
  TILETUNE_INT8 = 7,   /* int8: int8_t */
  TILETUNE_INT16 = 8,  /* int16: int16_t */
  TILETUNE_UINT16 = 9, /* uint16: uint16_t */
  TILETUNE_UINT64 = 10 /* uint64: uint64_t */
} tiletune_element_type;

/* A problem size: "N" = 8192. */
typedef struct tiletune_size {
  const char* name;
  int64_t value;
} tiletune_size;

/* A buffer of the space, by its name in `buffers:`. */
typedef struct tiletune_buffer {
  const char* name;
  int type;       /* a tiletune_element_type */
  uint64_t count; /* elements */
  void* data;     /* count elements; an input's must not be written */
} tiletune_buffer;

/* Everything one call sees. */
typedef struct tiletune_reference_call {
  int abi; /* TILETUNE_REFERENCE_ABI */
  const tiletune_size* sizes;
  int size_count;
  const tiletune_buffer* inputs; /* the buffers that are not outputs, in the space's order */
  int input_count;
  tiletune_buffer* outputs; /* the outputs, in the space's order */
  int output_count;
  char* error; /* where a failing function says why (NUL-terminated, at most error_size bytes) */
  size_t error_size;
} tiletune_reference_call;

/* The function a space names: fills the outputs and returns 0, or returns non-zero after
 * writing what is wrong into call->error (tiletune reports it and tunes nothing). */
typedef int (*tiletune_reference_fn)(const tiletune_reference_call* call);

/* Helpers (static inline: nothing to link). */
static inline const tiletune_buffer* tiletune_find_input(const tiletune_reference_call* call, const char* name) {
  int i;
  for (i = 0; i < call->input_count; ++i)
    if (strcmp(call->inputs[i].name, name) == 0) return &call->inputs[i];
  return NULL;
}

static inline tiletune_buffer* tiletune_find_output(const tiletune_reference_call* call, const char* name) {
  int i;
  for (i = 0; i < call->output_count; ++i)
    if (strcmp(call->outputs[i].name, name) == 0) return &call->outputs[i];
  return NULL;
}

/* Sets *value to the problem size `name`; returns 0 when the problem has no such size. */
static inline int tiletune_find_size(const tiletune_reference_call* call, const char* name, int64_t* value) {
  int i;
  for (i = 0; i < call->size_count; ++i) {
    if (strcmp(call->sizes[i].name, name) == 0) {
      *value = call->sizes[i].value;
      return 1;
    }
  }
  return 0;
}

/* Writes `message` into call->error and returns 1, for `return tiletune_fail(call, "...")`. */
static inline int tiletune_fail(const tiletune_reference_call* call, const char* message) {
  if (call->error != NULL && call->error_size > 0) snprintf(call->error, call->error_size, "%s", message);
  return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* TILETUNE_REFERENCE_H */
