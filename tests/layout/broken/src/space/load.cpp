#include "tiletune/sweep.hpp"  // space before tune
#include "space/loader.hpp"  // its own private header: fine
