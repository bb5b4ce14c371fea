/*
 * db.c: MariaDB Connector/C wrapper: lazy prepared statements, text results.
 * Every connection has connect, read and write timeouts (SVC_DB_CONNECT_TIMEOUT,
 * SVC_DB_TIMEOUT), so a stalled server costs a request seconds, not minutes. A
 * connection found dead at once (2006/2013 right away: the server restarted) is
 * replaced and the statement tried again, outside a transaction; one that died by
 * timing out is dropped and the caller gets SVC_E_UNAVAILABLE (503) at once, and
 * the next statement connects again, to the next server of SVC_DB_HOSTS first.
 * A deadlock or a Galera certification failure (1213) runs the statement (outside
 * a transaction) or the whole transaction (svc_db_tx) again, here and nowhere else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>

#include "db/db.h"
#include "core/err.h"
#include "core/log.h"
#include "core/util.h"

#define MAX_PARAMS 32 /* the widest statement: a page of an app's records (db_stmts_app.h) binds 25 */
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
	int tx_retry;        /* a statement of the open transaction (or its COMMIT) met 1213 */
	struct svc_db_server servers[SVC_DB_MAX_SERVERS];
	size_t nservers;
	size_t server;       /* the server of the connection, or the one the next connection tries first */
	size_t connected;    /* 1 + the server of the last connection made, 0 before the first */
	int galera;          /* the connection's server has wsrep_on */
	int sync_wait;       /* svc_db_sync_wait() holds for this request */
	int in_metric;       /* svc_db_metric_add() runs: it counts nothing of itself */
	char instance[192];  /* svc_db_instance() */
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

int svc_db_parse_servers(const char *list, unsigned default_port, struct svc_db_server *out, size_t *out_n)
{
	const char *p = list, *end, *a, *b, *colon;
	size_t n = 0, len;
	uint64_t port;
	char num[8];

	if (!list)
		return SVC_E_VALIDATION;
	for (;;) {
		struct svc_db_server sv;

		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		for (a = p; a < end && (*a == ' ' || *a == '\t'); a++)
			;
		for (b = end; b > a && (b[-1] == ' ' || b[-1] == '\t'); b--)
			;
		if (a == b || n == SVC_DB_MAX_SERVERS)
			return SVC_E_VALIDATION;
		memset(&sv, 0, sizeof sv);
		sv.port = default_port;
		len = (size_t)(b - a);
		if (*a == '/') {
			if (len >= sizeof sv.socket)
				return SVC_E_VALIDATION;
			memcpy(sv.socket, a, len);
		} else {
			const char *h = a, *he;

			if (*a == '[') {
				/* [v6-address]:port */
				he = memchr(a, ']', len);
				if (!he)
					return SVC_E_VALIDATION;
				h = a + 1;
				colon = he + 1 < b ? he + 1 : NULL;
				if (colon && *colon != ':')
					return SVC_E_VALIDATION;
			} else {
				colon = memchr(a, ':', len);
				he = colon ? colon : b;
			}
			if (he == h || (size_t)(he - h) >= sizeof sv.host)
				return SVC_E_VALIDATION;
			memcpy(sv.host, h, (size_t)(he - h));
			if (colon) {
				size_t nl = (size_t)(b - colon - 1);

				if (nl == 0 || nl >= sizeof num)
					return SVC_E_VALIDATION;
				memcpy(num, colon + 1, nl);
				num[nl] = '\0';
				if (svc_parse_u64(num, 65535, &port) < 0 || port == 0)
					return SVC_E_VALIDATION;
				sv.port = (unsigned)port;
			}
		}
		out[n++] = sv;
		if (!*end)
			break;
		p = end + 1;
	}
	*out_n = n;
	return 0;
}

enum svc_db_fault svc_db_fault_of(unsigned int e)
{
	switch (e) {
	case ER_LOCK_DEADLOCK:
		return SVC_DB_FAULT_RETRY;
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_STMT_CLOSED:
	case ER_CONNECTION_KILLED:
	case ER_UNKNOWN_COM_ERROR: /* wsrep: "WSREP has not yet prepared node for application use" */
		return SVC_DB_FAULT_GONE;
	case ER_LOCK_WAIT_TIMEOUT:
		return SVC_DB_FAULT_BUSY;
	default:
		return SVC_DB_FAULT_OTHER;
	}
}

int svc_db_instance(const struct svc_config *cfg, char *out, size_t max)
{
	char host[128];
	int n;

	if (cfg->instance_id && cfg->instance_id[0]) {
		n = snprintf(out, max, "%s", cfg->instance_id);
	} else {
		if (gethostname(host, sizeof host) < 0)
			return SVC_E_INTERNAL;
		host[sizeof host - 1] = '\0';
		n = snprintf(out, max, "%s:%ld", host, (long)getpid());
	}
	return n < 0 || (size_t)n >= max ? SVC_E_INTERNAL : 0;
}

/*
 * Asks the new connection whether it is a Galera node and whether the node is ready:
 * returns 1 (Galera), 0 (not Galera: wsrep_on off, or no such variable) or
 * SVC_E_UNAVAILABLE (1047: a node out of the primary component, or not synced).
 */
static int probe_wsrep(MYSQL *m)
{
	static const char q[] = "SELECT @@wsrep_on";
	MYSQL_RES *res;
	MYSQL_ROW row;
	int on = 0;

	if (mysql_real_query(m, q, sizeof q - 1)) {
		unsigned int e = mysql_errno(m);

		if (e == ER_UNKNOWN_SYSTEM_VARIABLE)
			return 0;
		svc_log_error("db: %s: %u %s", q, e, mysql_error(m));
		return SVC_E_UNAVAILABLE;
	}
	res = mysql_store_result(m);
	if (!res)
		return SVC_E_UNAVAILABLE;
	row = mysql_fetch_row(res);
	if (row && row[0] && strcmp(row[0], "1") == 0)
		on = 1;
	mysql_free_result(res);
	return on;
}

static int set_sync_wait(MYSQL *m, int on)
{
	const char *q = on ? "SET SESSION wsrep_sync_wait = 3" : "SET SESSION wsrep_sync_wait = 0";

	if (mysql_real_query(m, q, (unsigned long)strlen(q))) {
		svc_log_error("db: %s: %u %s", q, mysql_errno(m), mysql_error(m));
		return SVC_E_UNAVAILABLE;
	}
	return 0;
}

static void server_name(const struct svc_db_server *sv, char *out, size_t max)
{
	if (sv->socket[0])
		snprintf(out, max, "%s", sv->socket);
	else
		snprintf(out, max, "%s:%u", sv->host, sv->port);
}

/* Connects to server `sv`; returns the connection, or NULL (logged). */
static MYSQL *connect_one(struct svc_db *db, const struct svc_db_server *sv, int *out_galera)
{
	const struct svc_config *c = db->cfg;
	unsigned int timeout = c->db_connect_timeout ? c->db_connect_timeout : 3;
	unsigned int rw_timeout = c->db_timeout ? c->db_timeout : 5;
	MYSQL *m = mysql_init(NULL);
	char name[300];
	int galera;

	if (!m)
		return NULL;
	server_name(sv, name, sizeof name);
	mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
	mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
	mysql_optionsv(m, MYSQL_INIT_COMMAND,
		       "SET time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,"
		       "ERROR_FOR_DIVISION_BY_ZERO,NO_ZERO_DATE'");
	if (!mysql_real_connect(m, sv->socket[0] ? NULL : sv->host, c->db_user, c->db_password, c->db_name,
				sv->socket[0] ? 0 : sv->port, sv->socket[0] ? sv->socket : NULL,
				CLIENT_MULTI_STATEMENTS)) {
		svc_log_error("db: cannot connect to %s: %s", name, mysql_error(m));
		mysql_close(m);
		return NULL;
	}
	if ((galera = probe_wsrep(m)) < 0 || (galera && db->sync_wait && set_sync_wait(m, 1) < 0)) {
		svc_log_error("db: %s is not ready (a Galera node out of the cluster?)", name);
		mysql_close(m);
		return NULL;
	}
	*out_galera = galera;
	return m;
}

/* Connects to the first server that answers, from db->server on, each tried once. */
static int connect_db(struct svc_db *db)
{
	size_t i, k;

	for (i = 0; i < db->nservers; i++) {
		MYSQL *m;
		int galera = 0;

		k = (db->server + i) % db->nservers;
		m = connect_one(db, &db->servers[k], &galera);
		if (!m)
			continue;
		db->conn = m;
		db->galera = galera;
		db->server = k;
		if (db->connected ? db->connected != k + 1 : k != 0) {
			/* another server than the last connection's (or, at first, than the list's first) */
			char name[300];

			server_name(&db->servers[k], name, sizeof name);
			svc_log_info("db: failed over to %s (server %zu of %zu)", name, k + 1, db->nservers);
			db->connected = k + 1;
			svc_db_metric_add(db, "db_failovers", 1);
		}
		db->connected = k + 1;
		if (!db->conn)
			continue; /* the metric's write lost the new connection at once (a node leaving): the next one */
		return 0;
	}
	return SVC_E_UNAVAILABLE;
}

int svc_db_open(const struct svc_config *cfg, struct svc_db **out)
{
	struct svc_db *db = calloc(1, sizeof *db);
	int err;

	if (!db)
		return SVC_E_INTERNAL;
	db->cfg = cfg;
	if (cfg->db_hosts && cfg->db_hosts[0]) {
		if (svc_db_parse_servers(cfg->db_hosts, cfg->db_port ? cfg->db_port : 3306, db->servers,
					 &db->nservers) < 0) {
			svc_log_error("db: SVC_DB_HOSTS is not a list of host:port or /socket entries");
			free(db);
			return SVC_E_UNAVAILABLE;
		}
	} else {
		struct svc_db_server *sv = &db->servers[0];
		const char *host = cfg->db_host ? cfg->db_host : "localhost";

		db->nservers = 1;
		if (cfg->db_socket && cfg->db_socket[0])
			snprintf(sv->socket, sizeof sv->socket, "%s", cfg->db_socket);
		else
			snprintf(sv->host, sizeof sv->host, "%s", host);
		sv->port = cfg->db_port;
	}
	if (svc_db_instance(cfg, db->instance, sizeof db->instance) < 0)
		snprintf(db->instance, sizeof db->instance, "pid:%ld", (long)getpid());
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
	return svc_db_fault_of(e) == SVC_DB_FAULT_GONE;
}

/* Drops a connection found unusable: the next one starts with the next server of the list. */
static void drop_conn(struct svc_db *db)
{
	close_conn(db);
	if (db->nservers)
		db->server = (db->server + 1) % db->nservers;
}

static int translate(unsigned int e, const char *msg, const char *what)
{
	if (e == ER_DUP_ENTRY)
		return SVC_E_CONFLICT;
	svc_log_error("db: %.60s: %u %s", what, e, msg);
	if (svc_db_fault_of(e) != SVC_DB_FAULT_OTHER || e == CR_CONNECTION_ERROR || e == CR_CONN_HOST_ERROR)
		return SVC_E_UNAVAILABLE;
	return SVC_E_INTERNAL;
}

/* Waits a random 1 to 10*2^(attempt-1) ms (at most 200) before running a deadlocked transaction again. */
static void pause_before_retry(uint64_t attempt)
{
	unsigned int r = 0;
	unsigned int span = attempt >= 5 ? 160 : 10u << (attempt - 1);
	struct timespec ts;

	if (svc_random(&r, sizeof r) < 0)
		r = (unsigned int)svc_mono_ms();
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(1 + r % (span > 200 ? 200 : span)) * 1000000L;
	nanosleep(&ts, NULL);
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
	uint64_t retries = 0;
	unsigned int e = 0;
	int err;

	if (out)
		*out = NULL;
	for (;;) {
		int64_t t0 = svc_mono_ms();

		err = run_once(db, id, params, n, out, affected, &e);
		if (err < 0 && (is_lost(e) || !db->conn)) {
			/* The connection is gone (translate() logged how): a new one is made here (right
			 * away) or by the next statement (after a timeout, or inside a transaction, which
			 * died with it), to the next server of the list first. */
			int64_t ms = svc_mono_ms() - t0;

			if (db->conn)
				drop_conn(db);
			if (db->in_tx || ms >= QUICK_FAILURE_MS)
				return SVC_E_UNAVAILABLE;
			if (connect_db(db) < 0)
				return SVC_E_UNAVAILABLE;
			err = run_once(db, id, params, n, out, affected, &e);
			if (err < 0 && is_lost(e))
				drop_conn(db);
		}
		if (err < 0 && svc_db_fault_of(e) == SVC_DB_FAULT_RETRY) {
			/* a deadlock or a certification failure: inside a transaction svc_db_tx() runs it
			 * all again; alone, the statement was its own transaction: run it again here */
			if (db->in_tx) {
				db->tx_retry = 1;
			} else if (retries < db->cfg->db_tx_retries) {
				retries++;
				pause_before_retry(retries);
				continue;
			} else {
				svc_db_metric_add(db, "db_tx_gave_up", 1);
			}
		}
		break;
	}
	if (retries)
		svc_db_metric_add(db, "db_tx_retries", retries);
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
			drop_conn(db);
			if (db->in_tx || ms >= QUICK_FAILURE_MS || connect_db(db) < 0)
				return SVC_E_UNAVAILABLE;
			if (mysql_real_query(db->conn, sql, (unsigned long)strlen(sql))) {
				drop_conn(db);
				return SVC_E_UNAVAILABLE;
			}
			return 0;
		}
		if (svc_db_fault_of(e) == SVC_DB_FAULT_RETRY && db->in_tx)
			db->tx_retry = 1; /* Galera: the certification failure shows at COMMIT */
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

int svc_db_tx(struct svc_db *db, svc_db_tx_fn fn, void *arg)
{
	uint64_t retries = 0;
	int err;

	if (db->in_tx)
		return fn(db, arg); /* within the caller's transaction, which the outer svc_db_tx runs again */
	for (;;) {
		db->tx_retry = 0;
		if ((err = svc_db_begin(db)) < 0)
			break;
		err = fn(db, arg);
		if (err >= 0 && !db->tx_retry) {
			int c = svc_db_commit(db);

			if (c < 0)
				err = c;
		} else {
			svc_db_rollback(db);
			if (err >= 0)
				err = SVC_E_UNAVAILABLE; /* fn went on after its transaction was rolled back */
		}
		if (err >= 0 || !db->tx_retry)
			break;
		if (retries == db->cfg->db_tx_retries) {
			svc_log_error("db: a transaction met %llu deadlocks or certification failures in a row; given up",
				      (unsigned long long)retries + 1);
			svc_db_metric_add(db, "db_tx_gave_up", 1);
			break;
		}
		retries++;
		pause_before_retry(retries);
	}
	db->tx_retry = 0;
	if (retries)
		svc_db_metric_add(db, "db_tx_retries", retries);
	return err;
}

/* The body of svc_db_tx_steps(): each step in order. */
struct steps {
	const struct svc_db_step *s;
	size_t n;
};

static int run_steps(struct svc_db *db, void *arg)
{
	const struct steps *st = arg;
	size_t i;
	int err;

	for (i = 0; i < st->n; i++) {
		const struct svc_db_step *s = &st->s[i];

		if (s->affected)
			*s->affected = 0;
		if ((err = svc_db_run(db, s->stmt, s->params, s->n, NULL, s->affected)) < 0)
			return err;
	}
	return 0;
}

int svc_db_tx_steps(struct svc_db *db, const struct svc_db_step *steps, size_t n)
{
	struct steps st = { steps, n };

	return svc_db_tx(db, run_steps, &st);
}

int svc_db_sync_wait(struct svc_db *db)
{
	if (db->sync_wait)
		return 0;
	db->sync_wait = 1;
	if (db->conn && db->galera && set_sync_wait(db->conn, 1) < 0) {
		drop_conn(db);
		return SVC_E_UNAVAILABLE;
	}
	return 0;
}

int svc_db_is_galera(const struct svc_db *db)
{
	return db && db->conn && db->galera;
}

int svc_db_server_index(const struct svc_db *db)
{
	return db && db->conn ? (int)db->server : -1;
}

void svc_db_metric_add(struct svc_db *db, const char *name, uint64_t n)
{
	struct svc_dbv p[3];

	if (!db || db->in_metric)
		return;
	if (db->in_tx) {
		svc_log_error("db: metric %s counted inside a transaction: dropped", name);
		return;
	}
	p[0] = svc_dbv_str(name);
	p[1] = svc_dbv_str(db->instance);
	p[2] = svc_dbv_i64(n > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)n);
	db->in_metric = 1;
	if (svc_db_run(db, STMT_METRIC_ADD, p, 3, NULL, NULL) < 0)
		svc_log_error("db: metric %s not counted", name);
	db->in_metric = 0;
}

void svc_db_end_request(struct svc_db *db)
{
	if (db && db->in_tx) {
		svc_log_error("db: a request ended inside a transaction; rolled back");
		svc_db_rollback(db);
	}
	if (db && db->sync_wait) {
		db->sync_wait = 0;
		if (db->conn && db->galera && set_sync_wait(db->conn, 0) < 0)
			drop_conn(db);
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
