// The CLI reaching into the gpu stage.
#include "gpu/driver.hpp"
#include "tiletune/sweep.hpp"  // a later stage may be included by cli: fine
