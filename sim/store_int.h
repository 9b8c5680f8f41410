/* store_int.h: what the files of the store module share beyond store.h
 * (sim/store.c, sim/store_merge.c); not for anyone else. */
#ifndef SIM_STORE_INT_H
#define SIM_STORE_INT_H

#include <sqlite3.h>

#include "sim/store.h"

/* The store's connection, for statements of its own (store_merge.c).
 * Outside a transaction, as store.c leaves it. */
sqlite3 *store__db(struct store *st);

#endif
