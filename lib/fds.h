/* SPDX-License-Identifier: MIT */
/* How many fds this process has open: `ctl status` says it, and the fuzz
 * targets take one more after an input than before as a leak. */
#ifndef IBEMU_LIB_FDS_H
#define IBEMU_LIB_FDS_H

/* The entries of /proc/self/fd, less the one reading it; 0 if unreadable. */
unsigned fds_open(void);

#endif
