/* SPDX-License-Identifier: MIT */
/*
 * Mellanox's vendor class (0x0A) in a Mellanox node's firmware:
 * vendor_mlx.c.
 */
#ifndef IBEMU_FABRIC_VENDOR_MLX_H
#define IBEMU_FABRIC_VENDOR_MLX_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/mad.h>

#include "fabric/fabric.h"

#define VENDOR_MLX_CLASS	0x0a

/* A Get or Set of class 0x0A to node @n: true with the answer in @resp;
 * false when @n is not Mellanox's (no agent). */
bool vendor_mlx_process(const struct node *n, const uint8_t *req, uint8_t *resp);

#endif
