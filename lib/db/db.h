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

/* One MariaDB server of the list (SVC_DB_HOSTS): a unix socket, or a host and a port. */
struct svc_db_server {
	char host[256];    /* "" for a socket */
	unsigned port;
	char socket[256];  /* "" for TCP */
};

#define SVC_DB_MAX_SERVERS 8

/*
 * Parses a server list, "ENTRY,ENTRY,...", each entry an absolute socket path
 * ("/run/mysqld/mysqld.sock"), "host:port", "[v6-address]:port" or a bare
 * host (port `default_port`); blanks around entries are ignored. Fills
 * out[0..*out_n-1] (at most SVC_DB_MAX_SERVERS). Returns 0, or
 * SVC_E_VALIDATION for an empty list, an empty entry, a bad port, a name or
 * path of 256 bytes or more, or more than SVC_DB_MAX_SERVERS entries.
 */
int svc_db_parse_servers(const char *list, unsigned default_port, struct svc_db_server *out, size_t *out_n);

/*
 * Connects to MariaDB with the settings in `cfg`: the servers of SVC_DB_HOSTS
 * in order (the first that answers and is ready; see svc_db_run() for failing
 * over later), else the one of SVC_DB_SOCKET, else SVC_DB_HOST:SVC_DB_PORT;
 * utf8mb4, session time zone UTC, strict SQL mode, and the timeouts
 * SVC_DB_CONNECT_TIMEOUT (connecting, per server tried) and SVC_DB_TIMEOUT
 * (each read and write of a query), in seconds. A Galera node that is not
 * ready (not primary, not synced: error 1047) counts as down. Statements are
 * prepared lazily on first use. *out is freed with svc_db_close(). Errors:
 * SVC_E_UNAVAILABLE (logged; also a malformed SVC_DB_HOSTS).
 */
int svc_db_open(const struct svc_config *cfg, struct svc_db **out);

/* Closes the connection and its statements; NULL is allowed. */
void svc_db_close(struct svc_db *db);

/*
 * Executes statement `id` with `n` parameters and fetches all of its rows
 * into *out (NULL when `out` is NULL: the rows are discarded) and the number
 * of affected rows into *affected (may be NULL). On a lost connection (2006,
 * 2013) or a Galera node that stopped being ready (1047) the connection is
 * dropped and the next connection starts with the next server of the list;
 * when that happened at once (under a second: a server restarted or was
 * killed since the last statement) and outside a transaction, it reconnects,
 * prepares again and retries once; after a timeout (a stalled server) or
 * inside a transaction (which is lost) it returns SVC_E_UNAVAILABLE at once
 * and the next statement reconnects. Outside a transaction, a deadlock or a
 * Galera certification failure (1213) runs the statement again, up to
 * SVC_DB_TX_RETRIES times (counted in metric db_tx_retries); inside one, it
 * marks the transaction for svc_db_tx() to run again.
 * Errors: SVC_E_CONFLICT (duplicate key, ER_DUP_ENTRY), SVC_E_UNAVAILABLE
 * (no connection, timed out, a lock wait timeout (1205), a deadlock not
 * overcome), SVC_E_INTERNAL (anything else, logged).
 */
int svc_db_run(struct svc_db *db, enum svc_stmt id, const struct svc_dbv *params, size_t n,
	       struct svc_rows **out, uint64_t *affected);

/*
 * Starts, commits or rolls back a transaction. Errors as svc_db_run() (a
 * Galera certification failure shows at COMMIT: SVC_E_UNAVAILABLE). Code
 * that writes should use svc_db_tx(), which runs a transaction again after
 * such a failure.
 */
int svc_db_begin(struct svc_db *db);
int svc_db_commit(struct svc_db *db);
int svc_db_rollback(struct svc_db *db);

/* The body of a transaction: returns >= 0 to commit (svc_db_tx returns that value) or an error. */
typedef int (*svc_db_tx_fn)(struct svc_db *db, void *arg);

/*
 * Runs fn(db, arg) inside a transaction: START TRANSACTION, fn, then COMMIT
 * when fn returned >= 0, ROLLBACK when it returned an error. When a statement
 * of it or its COMMIT met a deadlock or a Galera certification failure (error
 * 1213, whatever fn made of the error), everything is rolled back and run
 * again from the start, after a short random pause, up to SVC_DB_TX_RETRIES
 * times; each run again counts one in metric db_tx_retries, giving up one in
 * db_tx_gave_up. So fn must be safe to run again: its effects outside the
 * database wait until svc_db_tx() returned, and its out-values are set anew
 * by each run. Must not be called inside a transaction. Returns fn's value
 * (>= 0), fn's error, or the errors of svc_db_run() (SVC_E_UNAVAILABLE when
 * the retries ran out).
 */
int svc_db_tx(struct svc_db *db, svc_db_tx_fn fn, void *arg);

/* One statement of svc_db_tx_steps(): `stmt` with its `n` parameters; its affected rows into *affected (may be NULL). */
struct svc_db_step {
	enum svc_stmt stmt;
	const struct svc_dbv *params;
	size_t n;
	uint64_t *affected;
};

/*
 * svc_db_tx() of a fixed list of statements that belong together (no reads,
 * no decisions between them): each of `steps`, `n` of them, in order; the
 * first error rolls back and is returned. Run again as svc_db_tx() says;
 * the affected counts are those of the run that committed. `steps`, their
 * parameters and counters are the caller's, borrowed for the call. Returns 0
 * or svc_db_run()'s errors (SVC_E_UNAVAILABLE after the last run again).
 */
int svc_db_tx_steps(struct svc_db *db, const struct svc_db_step *steps, size_t n);

/* What an error number of MariaDB (mysql_errno) means to the retry logic. */
enum svc_db_fault {
	SVC_DB_FAULT_OTHER,   /* not one of these: translated, not retried */
	SVC_DB_FAULT_RETRY,   /* 1213 ER_LOCK_DEADLOCK: deadlock, or Galera certification failure; the transaction is gone, run it again */
	SVC_DB_FAULT_GONE,    /* 2006, 2013, 2057, 1927, 1047 (Galera node not ready): the server is unusable, fail over */
	SVC_DB_FAULT_BUSY     /* 1205 ER_LOCK_WAIT_TIMEOUT: waited innodb_lock_wait_timeout already; 503, not run again */
};

/* Returns the class of MariaDB error number `e` (0 = no error gives SVC_DB_FAULT_OTHER). */
enum svc_db_fault svc_db_fault_of(unsigned int e);

/*
 * Makes the reads of this request on a Galera node wait until the node has
 * applied every write committed anywhere in the cluster before
 * (`SET SESSION wsrep_sync_wait=3`: SELECT, UPDATE and DELETE), so a read
 * sees a write just made through another node. Does nothing on a server
 * without Galera (wsrep_on is detected once per connection). Kept across a
 * reconnection; svc_db_end_request() sets it back. Only where a read must
 * see another host's write (docs/scaling.md lists the places). Errors as
 * svc_db_run().
 */
int svc_db_sync_wait(struct svc_db *db);

/* Returns 1 when the current connection is to a Galera node (wsrep_on), else 0. */
int svc_db_is_galera(const struct svc_db *db);

/* Returns the index in the server list (SVC_DB_HOSTS, from 0) of the current connection, or -1 without one. */
int svc_db_server_index(const struct svc_db *db);

/*
 * Adds `n` to counter `name` (an ASCII word of up to 64 bytes) of this process
 * in table db_metrics, outside any transaction; failures are logged and
 * ignored (a metric never fails a request). Called outside transactions
 * only: inside one, the count is logged and dropped.
 */
void svc_db_metric_add(struct svc_db *db, const char *name, uint64_t n);

/*
 * Writes this process's name in shared tables into out (`max` bytes, at least
 * 64): SVC_INSTANCE_ID, else "hostname:pid". Returns 0 or SVC_E_INTERNAL.
 */
int svc_db_instance(const struct svc_config *cfg, char *out, size_t max);

/*
 * Called by the responder loops after each request: rolls back a transaction
 * the request left open (a bug; logged), so the next request does not run
 * inside it, and ends svc_db_sync_wait(). NULL is allowed.
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
