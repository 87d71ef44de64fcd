/* SPDX-License-Identifier: MIT */
/*
 * The open files this process holds over the fast path (struct fast_obj),
 * and how a call gets hold of one. Each fd that names a file holds a
 * reference, and so does each call in progress on it: the kernel's read
 * holds its struct file (fdget) for as long as it runs, so a thread
 * blocked in read() while another closes the fd still gets the next MAD,
 * and the file is released at the last of the two (docs/fast-path.md,
 * "The library", Close).
 *
 * The table (fdtab.c) is read without a lock, so a call can find an
 * object that a close on another thread is letting go: objects are never
 * given back to malloc, only kept for the next open (their number is the
 * most files open at once), and a reference is taken only while the
 * count is not 0, then the table checked again.
 *
 * An fd the table names may have been closed behind this library's back
 * (syscall(SYS_close), a close inside libc, close_range where it is not
 * interposed) and its number given to another file: a call believes the
 * table only while the fd is still the socket it was (its st_dev and
 * st_ino), and forgets the entry otherwise.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "preload/fast.h"

static pthread_mutex_t objs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fast_obj *objs;	/* in use */
static struct fast_obj *spare;	/* released, for the next open */

int fast_ident_of(int fd, struct fast_ident *id)
{
	struct stat st;

	if (real_fstat(fd, &st) < 0)
		return -1;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	return 0;
}

int fast_ident_is(int fd, const struct fast_ident *id)
{
	struct fast_ident now;

	return fd >= 0 && fast_ident_of(fd, &now) == 0 && now.dev == id->dev &&
	       now.ino == id->ino;
}

struct fast_obj *obj_new(int flags, const char *dev, int data_fd)
{
	struct fast_obj *o;

	pthread_mutex_lock(&objs_lock);
	if ((o = spare))
		spare = o->next;
	pthread_mutex_unlock(&objs_lock);
	if (!o && !(o = malloc(sizeof(*o))))
		return NULL;
	memset(o, 0, sizeof(*o));
	if (fast_ident_of(data_fd, &o->data_id) < 0) {
		obj_free(o);
		return NULL;
	}
	o->chan = -1;
	o->gen = fast_gen;
	o->flags = flags;
	snprintf(o->dev, sizeof(o->dev), "%s", dev);
	pthread_mutex_init(&o->chan_lock, NULL);
	pthread_mutex_init(&o->read_lock, NULL);
	pthread_mutex_lock(&objs_lock);
	o->next = objs;
	objs = o;
	pthread_mutex_unlock(&objs_lock);
	/* Last: from here on a call may take a reference. */
	__atomic_store_n(&o->refs, 1, __ATOMIC_RELEASE);
	return o;
}

void obj_free(struct fast_obj *o)
{
	struct fast_obj **p;

	pthread_mutex_lock(&objs_lock);
	for (p = &objs; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			pthread_mutex_destroy(&o->chan_lock);
			pthread_mutex_destroy(&o->read_lock);
			break;
		}
	o->next = spare;
	spare = o;
	pthread_mutex_unlock(&objs_lock);
}

/* Only in a forked child (one thread): no lock to take. */
void obj_foreach(void (*fn)(struct fast_obj *o))
{
	struct fast_obj *o;

	pthread_mutex_init(&objs_lock, NULL);
	for (o = objs; o; o = o->next)
		fn(o);
}

/* A reference to @o unless its count is 0 already (it is being let go). */
static int obj_ref(struct fast_obj *o)
{
	int r = __atomic_load_n(&o->refs, __ATOMIC_ACQUIRE);

	while (r > 0)
		if (__atomic_compare_exchange_n(&o->refs, &r, r + 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 1;
	return 0;
}

void obj_put(struct fast_obj *o)
{
	if (o && __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0)
		fast_last_close(o);
}

struct fast_obj *obj_get(int fd)
{
	struct fast_obj *o = fdtab_data(fd);

	if (!o || !obj_ref(o))
		return NULL;
	if (fdtab_data(fd) != o) {	/* closed meanwhile */
		obj_put(o);
		return NULL;
	}
	if (!fast_ident_is(fd, &o->data_id)) {
		/* Closed behind our back: the number is another file's now
		 * (or none). The table's reference goes with the entry. */
		if (fdtab_clear_if(fd, o))
			obj_put(o);
		obj_put(o);
		return NULL;
	}
	return o;
}
