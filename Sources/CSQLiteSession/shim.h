// SQLite's session extension (changesets) for the cluster's state shipping (docs/behaviour.md §21,
// docs/failover.md). sqlite3.h declares it only under these two macros; Debian's libsqlite3 is
// built with both. Keep to includes and static inline shims.
#ifndef BEACONWATCH_CSQLITESESSION_SHIM_H
#define BEACONWATCH_CSQLITESESSION_SHIM_H

#ifndef SQLITE_ENABLE_SESSION
#define SQLITE_ENABLE_SESSION 1
#endif
#ifndef SQLITE_ENABLE_PREUPDATE_HOOK
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#endif
#include <sqlite3.h>
#include <string.h>

/// What applying a changeset met: rows replaced (the standby's row differed, or was there
/// already), changes omitted (a row to change or delete was not there), and whether the
/// position row conflicted (the changeset was not made on this state: the apply was undone).
typedef struct {
    int replaced;
    int omitted;
    int positionConflict;
} bw_apply_counts;

static int bw_conflict(void *context, int reason, sqlite3_changeset_iter *iterator) {
    bw_apply_counts *counts = (bw_apply_counts *)context;
    const char *table = 0;
    int columns = 0, operation = 0, indirect = 0;
    if (sqlite3changeset_op(iterator, &table, &columns, &operation, &indirect) == SQLITE_OK && table != 0
        && strcmp(table, "clusterPosition") == 0) {
        counts->positionConflict = 1;
        return SQLITE_CHANGESET_ABORT;
    }
    if (reason == SQLITE_CHANGESET_DATA || reason == SQLITE_CHANGESET_CONFLICT) {
        counts->replaced += 1;
        return SQLITE_CHANGESET_REPLACE;
    }
    counts->omitted += 1;
    return SQLITE_CHANGESET_OMIT;
}

/// Applies `changeset` to `db` (in a savepoint of its own): the newer row wins a conflict; a
/// conflict on the position row undoes it all (SQLITE_ABORT).
static inline int bw_changeset_apply(sqlite3 *db, int size, void *changeset, bw_apply_counts *counts) {
    return sqlite3changeset_apply(db, size, changeset, 0, bw_conflict, counts);
}

/// Whether `db`'s SQLite has the session extension at all (a library built without it lacks
/// the symbols, and this would not link; kept for a message).
static inline int bw_session_create(sqlite3 *db, sqlite3_session **session) {
    return sqlite3session_create(db, "main", session);
}

#endif
