/* SPDX-License-Identifier: GPL-2.0 */
/* copymodel shim: see bench/kshim/kshim.h */
#include "../kshim.h"
