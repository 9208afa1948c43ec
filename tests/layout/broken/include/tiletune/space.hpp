#include "tiletune/strategy.hpp"  // a public header of space including a later stage
