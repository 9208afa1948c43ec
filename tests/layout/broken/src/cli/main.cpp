// The CLI reaching into the device stage.
#include "device/driver.hpp"
#include "tiletune/sweep.hpp"  // a later stage may be included by cli: fine
