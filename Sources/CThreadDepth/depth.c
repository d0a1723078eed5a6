#include "depth.h"

_Thread_local const void *quire_depth_objects[QUIRE_DEPTH_SLOTS];
_Thread_local unsigned quire_depth_counts[QUIRE_DEPTH_SLOTS];
