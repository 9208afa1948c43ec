#include "device/driver.hpp"  // the device stage's private header: process is no friend of it
