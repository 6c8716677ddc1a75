#ifndef SUBD_ALLOCATION_COUNTER_H
#define SUBD_ALLOCATION_COUNTER_H

/// Allocation calls counted so far in this process (malloc, calloc, realloc other than a free, the aligned ones).
/// The integration tests load the library into subd with LD_PRELOAD and read the count with SIGUSR2 instead.
unsigned long subd_allocation_count(void);

/// Calls of the Swift runtime's retain entry points (swift_retain, swift_bridgeObjectRetain and their _n forms) made
/// through the dynamic linker so far.
unsigned long subd_retain_count(void);

/// The same for swift_release, swift_bridgeObjectRelease and their _n forms.
unsigned long subd_release_count(void);

#endif
