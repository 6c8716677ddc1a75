#ifndef SUBD_ALLOCATION_COUNTER_H
#define SUBD_ALLOCATION_COUNTER_H

/// Allocation calls counted so far in this process (malloc, calloc, realloc other than a free, the aligned ones).
/// The integration tests load the library into subd with LD_PRELOAD and read the count with SIGUSR2 instead.
unsigned long subd_allocation_count(void);

#endif
