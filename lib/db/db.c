/*
 * db.c: MariaDB Connector/C wrapper: lazy prepared statements, text results.
 * Every connection has connect, read and write timeouts (SVC_DB_CONNECT_TIMEOUT,
 * SVC_DB_TIMEOUT), so a stalled server costs a request seconds, not minutes. A
 * connection found dead at once (2006/2013 right away: the server restarted) is
 * replaced and the statement tried again, outside a transaction; one that died by
 * timing out is dropped and the caller gets SVC_E_UNAVAILABLE (503) at once, and
 * the next statement connects again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>

#include "db/db.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

#define MAX_PARAMS 16
#define MAX_COLS 32
#define CELL_MAX (16u * 1024 * 1024)
/* A statement that failed with a lost connection after this long timed out (a stalled
 * server): it is not tried again on a new connection. */
#define QUICK_FAILURE_MS 1000

static const char *const stmt_sql[STMT__MAX] = {
#define SVC_STMT(name, sql) [name] = sql,
#define SVC_COLS(...)
#include "db/db_stmts.h"
#undef SVC_COLS
#undef SVC_STMT
};

struct svc_db {
	const struct svc_config *cfg;
	MYSQL *conn;
	MYSQL_STMT *stmts[STMT__MAX];
	int in_tx;
};

struct svc_dbv svc_dbv_str(const char *s)
{
	struct svc_dbv v = { s ? SVC_DBV_STR : SVC_DBV_NULL, s, s ? strlen(s) : 0, 0 };
	return v;
}

struct svc_dbv svc_dbv_i64(int64_t i)
{
	struct svc_dbv v = { SVC_DBV_I64, NULL, 0, i };
	return v;
}

struct svc_dbv svc_dbv_null(void)
{
	struct svc_dbv v = { SVC_DBV_NULL, NULL, 0, 0 };
	return v;
}

const char *svc_db_sql(enum svc_stmt id)
{
	return stmt_sql[id];
}

const char *svc_rows_get(const struct svc_rows *rows, size_t row, size_t col)
{
	if (!rows || row >= rows->nrows || col >= rows->ncols)
		return NULL;
	return rows->cells[row * rows->ncols + col];
}

void svc_rows_free(struct svc_rows *rows)
{
	size_t i;

	if (!rows)
		return;
	for (i = 0; i < rows->nrows * rows->ncols; i++)
		free(rows->cells[i]);
	free(rows->cells);
	free(rows->lens);
	free(rows);
}

static void close_conn(struct svc_db *db)
{
	size_t i;

	for (i = 0; i < STMT__MAX; i++) {
		if (db->stmts[i])
			mysql_stmt_close(db->stmts[i]);
		db->stmts[i] = NULL;
	}
	if (db->conn)
		mysql_close(db->conn);
	db->conn = NULL;
}

static int connect_db(struct svc_db *db)
{
	const struct svc_config *c = db->cfg;
	unsigned int timeout = c->db_connect_timeout ? c->db_connect_timeout : 3;
	unsigned int rw_timeout = c->db_timeout ? c->db_timeout : 5;
	MYSQL *m = mysql_init(NULL);

	if (!m)
		return SVC_E_UNAVAILABLE;
	mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
	mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
	mysql_optionsv(m, MYSQL_INIT_COMMAND,
		       "SET time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,"
		       "ERROR_FOR_DIVISION_BY_ZERO,NO_ZERO_DATE'");
	if (!mysql_real_connect(m, c->db_socket[0] ? NULL : c->db_host, c->db_user,
				c->db_password, c->db_name, c->db_socket[0] ? 0 : c->db_port,
				c->db_socket[0] ? c->db_socket : NULL, CLIENT_MULTI_STATEMENTS)) {
		svc_log_error("db: cannot connect: %s", mysql_error(m));
		mysql_close(m);
		return SVC_E_UNAVAILABLE;
	}
	db->conn = m;
	return 0;
}

int svc_db_open(const struct svc_config *cfg, struct svc_db **out)
{
	struct svc_db *db = calloc(1, sizeof *db);
	int err;

	if (!db)
		return SVC_E_INTERNAL;
	db->cfg = cfg;
	if ((err = connect_db(db)) < 0) {
		free(db);
		return err;
	}
	*out = db;
	return 0;
}

void svc_db_close(struct svc_db *db)
{
	if (!db)
		return;
	close_conn(db);
	free(db);
}

static int is_lost(unsigned int e)
{
	return e == CR_SERVER_GONE_ERROR || e == CR_SERVER_LOST || e == CR_STMT_CLOSED;
}

static int translate(unsigned int e, const char *msg, const char *what)
{
	if (e == ER_DUP_ENTRY)
		return SVC_E_CONFLICT;
	svc_log_error("db: %.60s: %u %s", what, e, msg);
	if (is_lost(e) || e == CR_CONNECTION_ERROR || e == CR_CONN_HOST_ERROR)
		return SVC_E_UNAVAILABLE;
	return SVC_E_INTERNAL;
}

/* Prepares statement `id` once per connection; *out_errno gets the client error number (0 for none). */
static int prepare(struct svc_db *db, enum svc_stmt id, MYSQL_STMT **out, unsigned int *out_errno)
{
	MYSQL_STMT *st;
	my_bool update_max = 1;

	*out_errno = 0;
	if (db->stmts[id]) {
		*out = db->stmts[id];
		return 0;
	}
	if (!db->conn) {
		*out_errno = CR_SERVER_GONE_ERROR;
		return SVC_E_UNAVAILABLE;
	}
	st = mysql_stmt_init(db->conn);
	if (!st)
		return SVC_E_INTERNAL;
	if (mysql_stmt_prepare(st, stmt_sql[id], (unsigned long)strlen(stmt_sql[id]))) {
		int err = translate(*out_errno = mysql_stmt_errno(st), mysql_stmt_error(st), "prepare");
		mysql_stmt_close(st);
		return err;
	}
	mysql_stmt_attr_set(st, STMT_ATTR_UPDATE_MAX_LENGTH, &update_max);
	db->stmts[id] = st;
	*out = st;
	return 0;
}

static int fetch_rows(MYSQL_STMT *st, struct svc_rows **out)
{
	MYSQL_RES *meta = mysql_stmt_result_metadata(st);
	MYSQL_BIND binds[MAX_COLS];
	unsigned long lens[MAX_COLS];
	my_bool nulls[MAX_COLS];
	struct svc_rows *rows = NULL;
	MYSQL_FIELD *fields;
	size_t ncols, nrows, r, c;
	int err = SVC_E_INTERNAL, rc;

	if (!meta) {
		/* A statement without a result set. */
		if (out)
			*out = NULL;
		return 0;
	}
	ncols = mysql_num_fields(meta);
	if (ncols > MAX_COLS)
		goto done;
	if (mysql_stmt_store_result(st)) {
		err = translate(mysql_stmt_errno(st), mysql_stmt_error(st), "store_result");
		goto done;
	}
	nrows = (size_t)mysql_stmt_num_rows(st);
	fields = mysql_fetch_fields(meta);
	rows = calloc(1, sizeof *rows);
	if (!rows)
		goto done;
	rows->ncols = ncols;
	if (nrows && ncols) {
		rows->cells = calloc(nrows * ncols, sizeof *rows->cells);
		rows->lens = calloc(nrows * ncols, sizeof *rows->lens);
		if (!rows->cells || !rows->lens)
			goto done;
	}
	memset(binds, 0, sizeof binds);
	for (c = 0; c < ncols; c++) {
		binds[c].buffer_type = MYSQL_TYPE_STRING;
		binds[c].buffer = NULL;
		binds[c].buffer_length = 0;
		binds[c].length = &lens[c];
		binds[c].is_null = &nulls[c];
	}
	(void)fields;
	if (mysql_stmt_bind_result(st, binds))
		goto done;
	for (r = 0; r < nrows; r++) {
		rc = mysql_stmt_fetch(st);
		if (rc == MYSQL_NO_DATA)
			break;
		if (rc == 1) {
			err = translate(mysql_stmt_errno(st), mysql_stmt_error(st), "fetch");
			goto done;
		}
		rows->nrows = r + 1;
		for (c = 0; c < ncols; c++) {
			char *cell;
			MYSQL_BIND b;

			if (nulls[c])
				continue;
			if (lens[c] > CELL_MAX)
				goto done;
			cell = malloc((size_t)lens[c] + 1);
			if (!cell)
				goto done;
			rows->cells[r * ncols + c] = cell;
			rows->lens[r * ncols + c] = lens[c];
			if (lens[c]) {
				memset(&b, 0, sizeof b);
				b.buffer_type = MYSQL_TYPE_STRING;
				b.buffer = cell;
				b.buffer_length = lens[c] + 1;
				if (mysql_stmt_fetch_column(st, &b, (unsigned int)c, 0))
					goto done;
			}
			cell[lens[c]] = '\0';
		}
	}
	err = 0;
done:
	mysql_stmt_free_result(st);
	mysql_free_result(meta);
	if (err < 0 || !out) {
		svc_rows_free(rows);
		rows = NULL;
	}
	if (err == 0 && out)
		*out = rows;
	return err;
}

static int run_once(struct svc_db *db, enum svc_stmt id, const struct svc_dbv *params, size_t n,
		    struct svc_rows **out, uint64_t *affected, unsigned int *out_errno)
{
	MYSQL_BIND binds[MAX_PARAMS];
	long long ints[MAX_PARAMS];
	MYSQL_STMT *st;
	size_t i;
	int err;

	*out_errno = 0;
	if ((err = prepare(db, id, &st, out_errno)) < 0)
		return err;
	if (n > MAX_PARAMS || n != mysql_stmt_param_count(st)) {
		svc_log_error("db: statement %d takes %lu parameters, given %zu", (int)id,
			      mysql_stmt_param_count(st), n);
		return SVC_E_INTERNAL;
	}
	memset(binds, 0, sizeof binds);
	for (i = 0; i < n; i++) {
		switch (params[i].type) {
		case SVC_DBV_NULL:
			binds[i].buffer_type = MYSQL_TYPE_NULL;
			break;
		case SVC_DBV_STR:
			binds[i].buffer_type = MYSQL_TYPE_STRING;
			binds[i].buffer = (void *)params[i].s;
			binds[i].buffer_length = (unsigned long)params[i].len;
			break;
		case SVC_DBV_I64:
			ints[i] = params[i].i;
			binds[i].buffer_type = MYSQL_TYPE_LONGLONG;
			binds[i].buffer = &ints[i];
			break;
		}
	}
	if (n && mysql_stmt_bind_param(st, binds)) {
		*out_errno = mysql_stmt_errno(st);
		return translate(*out_errno, mysql_stmt_error(st), "bind");
	}
	if (mysql_stmt_execute(st)) {
		*out_errno = mysql_stmt_errno(st);
		return translate(*out_errno, mysql_stmt_error(st), svc_db_sql(id));
	}
	if (affected)
		*affected = (uint64_t)mysql_stmt_affected_rows(st);
	return fetch_rows(st, out);
}

int svc_db_run(struct svc_db *db, enum svc_stmt id, const struct svc_dbv *params, size_t n,
	       struct svc_rows **out, uint64_t *affected)
{
	unsigned int e = 0;
	int err;

	int64_t t0 = svc_mono_ms();

	if (out)
		*out = NULL;
	err = run_once(db, id, params, n, out, affected, &e);
	if (err < 0 && (is_lost(e) || !db->conn)) {
		/* The connection is gone (translate() logged how): a new one is made here (right
		 * away) or by the next statement (after a timeout, or inside a transaction, which
		 * died with it). */
		int64_t ms = svc_mono_ms() - t0;

		close_conn(db);
		if (db->in_tx || ms >= QUICK_FAILURE_MS)
			return SVC_E_UNAVAILABLE;
		if (connect_db(db) < 0)
			return SVC_E_UNAVAILABLE;
		err = run_once(db, id, params, n, out, affected, &e);
		if (err < 0 && is_lost(e))
			close_conn(db);
	}
	return err;
}

static int simple(struct svc_db *db, const char *sql)
{
	int64_t t0 = svc_mono_ms();

	if (!db->conn && (db->in_tx || connect_db(db) < 0))
		return SVC_E_UNAVAILABLE;
	if (mysql_real_query(db->conn, sql, (unsigned long)strlen(sql))) {
		unsigned int e = mysql_errno(db->conn);
		if (is_lost(e)) {
			/* as in svc_db_run: again at once only outside a transaction and not after a timeout */
			int64_t ms = svc_mono_ms() - t0;

			svc_log_error("db: %s: %u %s", sql, e, mysql_error(db->conn));
			close_conn(db);
			if (db->in_tx || ms >= QUICK_FAILURE_MS || connect_db(db) < 0)
				return SVC_E_UNAVAILABLE;
			if (mysql_real_query(db->conn, sql, (unsigned long)strlen(sql))) {
				close_conn(db);
				return SVC_E_UNAVAILABLE;
			}
			return 0;
		}
		return translate(e, mysql_error(db->conn), sql);
	}
	return 0;
}

int svc_db_begin(struct svc_db *db)
{
	int err = simple(db, "START TRANSACTION");

	if (err == 0)
		db->in_tx = 1;
	return err;
}

int svc_db_commit(struct svc_db *db)
{
	int err = simple(db, "COMMIT");

	db->in_tx = 0;
	return err;
}

int svc_db_rollback(struct svc_db *db)
{
	int err;

	if (!db->conn) {
		db->in_tx = 0;
		return 0;
	}
	err = simple(db, "ROLLBACK");
	db->in_tx = 0;
	return err;
}

void svc_db_end_request(struct svc_db *db)
{
	if (db && db->in_tx) {
		svc_log_error("db: a request ended inside a transaction; rolled back");
		svc_db_rollback(db);
	}
}

int svc_db_exec_script(struct svc_db *db, const char *sql)
{
	int status;

	if (!db->conn)
		return SVC_E_UNAVAILABLE;
	if (mysql_real_query(db->conn, sql, (unsigned long)strlen(sql)))
		return translate(mysql_errno(db->conn), mysql_error(db->conn), "script");
	do {
		MYSQL_RES *res = mysql_store_result(db->conn);
		if (res)
			mysql_free_result(res);
		else if (mysql_field_count(db->conn))
			return translate(mysql_errno(db->conn), mysql_error(db->conn), "script");
		status = mysql_next_result(db->conn);
		if (status > 0)
			return translate(mysql_errno(db->conn), mysql_error(db->conn), "script");
	} while (status == 0);
	return 0;
}

int svc_db_prepare_all(struct svc_db *db, size_t *out_failed)
{
	size_t i;
	int err;

	for (i = 0; i < STMT__MAX; i++) {
		MYSQL_STMT *st;
		unsigned int e;

		if ((err = prepare(db, (enum svc_stmt)i, &st, &e)) < 0) {
			*out_failed = i;
			return err;
		}
	}
	return 0;
}
