#include "device/driver.hpp"  // the device stage's private header, to its friend: fine
#include "process/frames.hpp"  // a friend of nobody, and of a later stage
