#ifndef QUIRE_CTHREADDEPTH_DEPTH_H
#define QUIRE_CTHREADDEPTH_DEPTH_H
/* How many times this thread is inside each of a few objects (QuireLMDB's reader gates). Swift
   has no thread-local variables; C11's _Thread_local costs a load, where a pthread key costs a
   call. A thread inside more than QUIRE_DEPTH_SLOTS objects at once is not tracked for the
   rest: their depth reads 0, which only means the old, non-reentrant behaviour for them. */

#define QUIRE_DEPTH_SLOTS 8

/* Defined in depth.c: a header's static variables would not reach Swift's code. */
extern _Thread_local const void *quire_depth_objects[QUIRE_DEPTH_SLOTS];
extern _Thread_local unsigned quire_depth_counts[QUIRE_DEPTH_SLOTS];

static inline unsigned quire_depth_of(const void *object) {
    for (int i = 0; i < QUIRE_DEPTH_SLOTS; i++) {
        if (quire_depth_objects[i] == object) return quire_depth_counts[i];
    }
    return 0;
}

/* Counts one more entry into `object` and returns the depth before it (0 for a first entry,
   and for one not tracked because every slot is taken). */
static inline unsigned quire_depth_enter(const void *object) {
    int free_slot = -1;
    for (int i = 0; i < QUIRE_DEPTH_SLOTS; i++) {
        if (quire_depth_objects[i] == object) return quire_depth_counts[i]++;
        if (free_slot < 0 && quire_depth_objects[i] == 0) free_slot = i;
    }
    if (free_slot >= 0) {
        quire_depth_objects[free_slot] = object;
        quire_depth_counts[free_slot] = 1;
    }
    return 0;
}

static inline void quire_depth_leave(const void *object) {
    for (int i = 0; i < QUIRE_DEPTH_SLOTS; i++) {
        if (quire_depth_objects[i] == object) {
            if (--quire_depth_counts[i] == 0) quire_depth_objects[i] = 0;
            return;
        }
    }
}

#endif
