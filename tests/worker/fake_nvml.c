/* A fake libnvidia-ml for the energy tests: the seven NVML entry points tiletune loads, with a
 * board that draws FAKE_NVML_POWER_MW milliwatts (default 300000) and an energy counter that
 * ticks every FAKE_NVML_UPDATE_MS milliseconds (default 10), like the real one, only faster.
 * Other variables make each call fail the way NVML can: FAKE_NVML_INIT_FAIL, FAKE_NVML_NO_DEVICE,
 * FAKE_NVML_NO_ENERGY (not supported), FAKE_NVML_NO_POWER, FAKE_NVML_ENERGY_LOST (GPU lost).
 * The SM clock is FAKE_NVML_SM_MHZ (default 1980) with clock-event reasons FAKE_NVML_CLOCK_REASONS
 * (default 0), the memory clock FAKE_NVML_MEM_MHZ (default 3201), the temperature
 * FAKE_NVML_TEMPERATURE_C (default 47). Built without FAKE_NVML_COMPLETE it lacks
 * nvmlDeviceGetTotalEnergyConsumption and the clock and temperature functions. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double env(const char* name, double fallback) {
  const char* v = getenv(name);
  return v && *v ? atof(v) : fallback;
}

static double started_ms = 0;
static int device_token = 0;

int nvmlInit_v2(void) {
  if (env("FAKE_NVML_INIT_FAIL", 0)) return 999; /* NVML_ERROR_UNKNOWN */
  started_ms = now_ms();
  return 0;
}

int nvmlShutdown(void) { return 0; }

const char* nvmlErrorString(int r) {
  switch (r) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 6: return "Not Found";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}

int nvmlDeviceGetHandleByUUID(const char* uuid, void** device) {
  if (env("FAKE_NVML_NO_DEVICE", 0) || strncmp(uuid, "GPU-", 4) != 0) return 6; /* NOT_FOUND */
  *device = &device_token;
  return 0;
}

static double ticks(void) { return (double)(long long)((now_ms() - started_ms) / env("FAKE_NVML_UPDATE_MS", 10)); }

#ifdef FAKE_NVML_COMPLETE
int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* mj) {
  (void)device;
  if (env("FAKE_NVML_NO_ENERGY", 0)) return 3;
  if (env("FAKE_NVML_ENERGY_LOST", 0)) return 15;
  /* mW x ms = uJ; / 1000: mJ. Starts at a large value, as a board that has run for a while. */
  *mj = 123456789ULL +
        (unsigned long long)(ticks() * env("FAKE_NVML_UPDATE_MS", 10) * env("FAKE_NVML_POWER_MW", 300000) / 1000.0);
  return 0;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
  (void)device;
  if (type == 1) { /* NVML_CLOCK_SM */
    *mhz = (unsigned)env("FAKE_NVML_SM_MHZ", 1980);
    return 0;
  }
  if (type == 2) { /* NVML_CLOCK_MEM */
    *mhz = (unsigned)env("FAKE_NVML_MEM_MHZ", 3201);
    return 0;
  }
  return 2; /* INVALID_ARGUMENT */
}

int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* celsius) {
  (void)device;
  if (sensor != 0) return 2; /* only NVML_TEMPERATURE_GPU */
  *celsius = (unsigned)env("FAKE_NVML_TEMPERATURE_C", 47);
  return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
  (void)device;
  *reasons = (unsigned long long)env("FAKE_NVML_CLOCK_REASONS", 0);
  return 0;
}
#endif

int nvmlDeviceGetPowerUsage(void* device, unsigned* mw) {
  (void)device;
  if (env("FAKE_NVML_NO_POWER", 0)) return 3;
  /* Alternates by 1 W at each update, so that a probe sees the reading change. */
  *mw = (unsigned)env("FAKE_NVML_POWER_MW", 300000) + ((long long)ticks() % 2 ? 500 : -500);
  return 0;
}

int nvmlDeviceGetName(void* device, char* name, unsigned length) {
  (void)device;
  strncpy(name, "Fake GPU", length);
  name[length - 1] = 0;
  return 0;
}
