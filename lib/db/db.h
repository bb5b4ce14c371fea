/* db.h: MariaDB access through one table of prepared statements (lib/db/db_stmts.h). */
#ifndef SVC_DB_H
#define SVC_DB_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

/* The statements, named STMT_*, in the order of lib/db/db_stmts.h. */
enum svc_stmt {
#define SVC_STMT(name, sql) name,
#define SVC_COLS(...)
#include "db/db_stmts.h"
#undef SVC_COLS
#undef SVC_STMT
	STMT__MAX
};

/*
 * The column indexes of the statements' rows, for svc_rows_get(): each
 * statement that returns rows names its columns with SVC_COLS(...) right
 * after its SQL (an anonymous enum, e.g. UCOL_ID, UCOL_EMAIL ...), so no
 * caller counts columns by hand. tests/lint.sh rejects literal indexes.
 */
#define SVC_STMT(name, sql)
#define SVC_COLS(...) enum { __VA_ARGS__ };
#include "db/db_stmts.h"
#undef SVC_COLS
#undef SVC_STMT

/* A bound parameter: NULL, a string (UTF-8 text or bytes) or a 64-bit integer. */
struct svc_dbv {
	enum { SVC_DBV_NULL, SVC_DBV_STR, SVC_DBV_I64 } type;
	const char *s;   /* SVC_DBV_STR: borrowed, `len` bytes */
	size_t len;
	int64_t i;       /* SVC_DBV_I64 */
};

/* Parameter constructors: a string (NULL becomes SQL NULL), an integer, SQL NULL. */
struct svc_dbv svc_dbv_str(const char *s);
struct svc_dbv svc_dbv_i64(int64_t i);
struct svc_dbv svc_dbv_null(void);

/* A fully fetched result: every cell as NUL-terminated text, or NULL for SQL NULL. */
struct svc_rows {
	size_t nrows;
	size_t ncols;
	char **cells;    /* nrows * ncols, row-major; owned */
	size_t *lens;    /* byte length of each cell */
};

/* Returns the text of cell (row, col), or NULL for SQL NULL or out-of-range indexes. */
const char *svc_rows_get(const struct svc_rows *rows, size_t row, size_t col);

/* Frees a result; NULL is allowed. */
void svc_rows_free(struct svc_rows *rows);

struct svc_db;

/*
 * Connects to MariaDB with the settings in `cfg` (unix socket when
 * SVC_DB_SOCKET is set, else TCP), utf8mb4, session time zone UTC, strict
 * SQL mode, and the timeouts SVC_DB_CONNECT_TIMEOUT (connecting) and
 * SVC_DB_TIMEOUT (each read and write of a query), in seconds. Statements are
 * prepared lazily on first use. *out is freed with svc_db_close(). Errors:
 * SVC_E_UNAVAILABLE (logged).
 */
int svc_db_open(const struct svc_config *cfg, struct svc_db **out);

/* Closes the connection and its statements; NULL is allowed. */
void svc_db_close(struct svc_db *db);

/*
 * Executes statement `id` with `n` parameters and fetches all of its rows
 * into *out (NULL when `out` is NULL: the rows are discarded) and the number
 * of affected rows into *affected (may be NULL). On a lost connection (2006,
 * 2013) the connection is dropped; when that happened at once (under a
 * second: a server restarted since the last statement) and outside a
 * transaction, it reconnects, prepares again and retries once; after a
 * timeout (a stalled server) or inside a transaction (which is lost) it
 * returns SVC_E_UNAVAILABLE at once and the next statement reconnects.
 * Errors: SVC_E_CONFLICT (duplicate key, ER_DUP_ENTRY), SVC_E_UNAVAILABLE
 * (no connection, timed out), SVC_E_INTERNAL (anything else, logged).
 */
int svc_db_run(struct svc_db *db, enum svc_stmt id, const struct svc_dbv *params, size_t n,
	       struct svc_rows **out, uint64_t *affected);

/* Starts, commits or rolls back a transaction. Errors as svc_db_run(). */
int svc_db_begin(struct svc_db *db);
int svc_db_commit(struct svc_db *db);
int svc_db_rollback(struct svc_db *db);

/*
 * Called by the responder loops after each request: rolls back a transaction
 * the request left open (a bug; logged), so the next request does not run
 * inside it. NULL is allowed.
 */
void svc_db_end_request(struct svc_db *db);

/*
 * Runs a whole SQL script (several statements, as in the schema files) with the
 * text protocol. Only for svc-migrate. Errors: SVC_E_INTERNAL (logged).
 */
int svc_db_exec_script(struct svc_db *db, const char *sql);

/*
 * Prepares every statement of the table once, so a unit test can show that
 * each one is valid against the migrated schema. Returns 0, or the first
 * error; *out_failed receives the failing statement's index.
 */
int svc_db_prepare_all(struct svc_db *db, size_t *out_failed);

/* Returns the SQL text of statement `id`. */
const char *svc_db_sql(enum svc_stmt id);

#endif
