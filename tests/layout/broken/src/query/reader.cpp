#include "tiletune/cache_db.hpp"  // query is standalone
#include "tiletune/objective.hpp"  // common: fine
