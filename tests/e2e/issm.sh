#!/bin/bash
# issm: one holder per port; IsSM (0x2) in sysfs cap_mask while held; a
# second non-blocking open fails with EAGAIN; closing clears the bit.
. "$(dirname "$0")/lib.sh"

CAP=/sys/class/infiniband/ibemu0/ports/1/cap_mask
ibemu_run -- python3 -c "
import os, errno
cap = '$CAP'
print('before', open(cap).read().strip())
fd = os.open('/dev/infiniband/issm0', os.O_RDONLY | os.O_NONBLOCK)
print('held', open(cap).read().strip())
try:
    os.open('/dev/infiniband/issm0', os.O_RDONLY | os.O_NONBLOCK)
    print('second open succeeded')
except OSError as e:
    print('second open', errno.errorcode[e.errno])
try:
    os.read(fd, 10)
except OSError as e:
    print('read', errno.errorcode[e.errno])
os.close(fd)
print('after', open(cap).read().strip())
fd = os.open('/dev/infiniband/issm0', os.O_RDONLY | os.O_NONBLOCK)
print('reopened')
"
expect_rc 0 "python opens issm directly"
expect_line "before 0x02510868" "no IsSM before"
expect_line "held 0x0251086a" "IsSM while held"
expect_line "second open EAGAIN" "second holder refused"
expect_line "read EINVAL" "issm has no read"
expect_line "after 0x02510868" "IsSM cleared on close"
expect_line "reopened" "free again after close"
finish
