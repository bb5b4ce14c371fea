/* floor.c: the same-work floor of GET /api/projects/:id: a lean FastCGI responder doing only the JWT check and the one SELECT. */
/*
 * What svc-projects does for the request, and nothing else: the Bearer
 * token verified with libjwt (HS256, issuer, expiry, kind "access"), the
 * project read with svc's own statement (STMT_PROJECT_GET_STATE, prepared
 * once on a kept connection), the caller's membership or the project's
 * visibility checked, and the Project JSON written with json-c. No rate
 * limit, no session check, no router: what a request costs at the least
 * with the same libraries (bench/http/run.sh measures svc against it).
 *
 * Settings from the environment: JWT_SECRET, JWT_ISSUER (default svc),
 * SVC_DB_SOCKET, SVC_DB_USER (root), SVC_DB_NAME (svc).
 * Build: cc -O2 -o floor floor.c -lfcgi -ljwt $(mariadb_config --libs) $(pkg-config --libs json-c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcgiapp.h>
#include <jwt.h>
#include <json-c/json.h>
#include <mysql.h>

#define NCOLS 16

static const char *sql =
	"SELECT p.id, p.workspace_id, p.folder_id, p.slug, p.name, p.description, p.template, "
	"p.visibility, p.thumbnail_url, DATE_FORMAT(p.published_at, '%Y-%m-%d %H:%i:%s.%f'), p.custom_domain, "
	"DATE_FORMAT(p.created_at, '%Y-%m-%d %H:%i:%s.%f'), DATE_FORMAT(p.updated_at, '%Y-%m-%d %H:%i:%s.%f'), "
	"p.created_by, m.role, COALESCE(u.is_platform_admin, 0) FROM projects p "
	"LEFT JOIN workspace_members m ON m.workspace_id = p.workspace_id AND m.user_id = ? "
	"LEFT JOIN users u ON u.id = ? WHERE p.id = ? AND (? = -1 OR ? = (p.deleted_at IS NOT NULL))";

static const char *names[NCOLS] = { "id", "workspaceId", "folderId", "slug", "name", "description", "template",
				     "visibility", "thumbnailUrl", "publishedAt", "customDomain", "createdAt",
				     "updatedAt", NULL, NULL, NULL };

static const char *env(const char *name, const char *dflt)
{
	const char *v = getenv(name);
	return v && *v ? v : dflt;
}

static void answer(FCGX_Request *r, int status, const char *body)
{
	FCGX_FPrintF(r->out, "Status: %d\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", status,
		     (int)strlen(body), body);
}

/* The user id of a valid access token, into out (37 bytes). 0 or -1. */
static int verify(const char *auth, const char *secret, const char *issuer, char *out)
{
	jwt_t *j = NULL;
	const char *sub, *iss, *kind;
	long exp;
	int ok = -1;

	if (!auth || strncmp(auth, "Bearer ", 7) != 0)
		return -1;
	if (jwt_decode(&j, auth + 7, (const unsigned char *)secret, (int)strlen(secret)) != 0 || !j)
		return -1;
	sub = jwt_get_grant(j, "sub");
	iss = jwt_get_grant(j, "iss");
	kind = jwt_get_grant(j, "kind");
	exp = jwt_get_grant_int(j, "exp");
	if (jwt_get_alg(j) == JWT_ALG_HS256 && sub && strlen(sub) == 36 && iss && strcmp(iss, issuer) == 0 &&
	    kind && strcmp(kind, "access") == 0 && exp > (long)time(NULL)) {
		memcpy(out, sub, 37);
		ok = 0;
	}
	jwt_free(j);
	return ok;
}

/* Reads project `id` for `user`: 200 with the Project, 404 or 403 into r. */
static void get_project(FCGX_Request *r, MYSQL_STMT *st, const char *user, const char *id)
{
	MYSQL_BIND in[5], out[NCOLS];
	char cell[NCOLS][512];
	unsigned long len[NCOLS];
	my_bool null[NCOLS];
	long long all = 0;
	struct json_object *o;
	int i;

	memset(in, 0, sizeof in);
	memset(out, 0, sizeof out);
	in[0].buffer_type = in[1].buffer_type = in[2].buffer_type = MYSQL_TYPE_STRING;
	in[0].buffer = in[1].buffer = (void *)user;
	in[0].buffer_length = in[1].buffer_length = strlen(user);
	in[2].buffer = (void *)id;
	in[2].buffer_length = strlen(id);
	in[3].buffer_type = in[4].buffer_type = MYSQL_TYPE_LONGLONG;
	in[3].buffer = in[4].buffer = &all;
	for (i = 0; i < NCOLS; i++) {
		out[i].buffer_type = MYSQL_TYPE_STRING;
		out[i].buffer = cell[i];
		out[i].buffer_length = sizeof cell[i] - 1;
		out[i].length = &len[i];
		out[i].is_null = &null[i];
	}
	if (mysql_stmt_bind_param(st, in) || mysql_stmt_execute(st) || mysql_stmt_bind_result(st, out)) {
		answer(r, 500, "{\"error\":\"internal_error\"}");
		return;
	}
	if (mysql_stmt_fetch(st) != 0) {
		mysql_stmt_free_result(st);
		answer(r, 404, "{\"error\":\"not_found\"}");
		return;
	}
	while (mysql_stmt_fetch(st) == 0)
		;
	mysql_stmt_free_result(st);
	for (i = 0; i < NCOLS; i++)
		cell[i][null[i] ? 0 : len[i]] = '\0';
	if (null[14] && strcmp(cell[7], "public") != 0 && strcmp(cell[15], "1") != 0) {
		answer(r, 403, "{\"error\":\"forbidden\"}");
		return;
	}
	o = json_object_new_object();
	for (i = 0; names[i]; i++)
		json_object_object_add(o, names[i], null[i] ? NULL : json_object_new_string(cell[i]));
	answer(r, 200, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

int main(void)
{
	const char *secret = env("JWT_SECRET", NULL), *issuer = env("JWT_ISSUER", "svc");
	MYSQL *db = mysql_init(NULL);
	MYSQL_STMT *st;
	FCGX_Request r;
	char user[37];

	if (!secret || !db || !mysql_real_connect(db, NULL, env("SVC_DB_USER", "root"), env("SVC_DB_PASSWORD", ""),
						  env("SVC_DB_NAME", "svc"), 0, env("SVC_DB_SOCKET", NULL), 0)) {
		fprintf(stderr, "floor: JWT_SECRET and a database are needed\n");
		return 1;
	}
	st = mysql_stmt_init(db);
	if (!st || mysql_stmt_prepare(st, sql, strlen(sql))) {
		fprintf(stderr, "floor: %s\n", mysql_error(db));
		return 1;
	}
	FCGX_Init();
	FCGX_InitRequest(&r, 0, 0);
	while (FCGX_Accept_r(&r) >= 0) {
		const char *uri = FCGX_GetParam("REQUEST_URI", r.envp);
		const char *id = uri ? strrchr(uri, '/') : NULL;

		if (!id || strlen(id + 1) != 36)
			answer(&r, 404, "{\"error\":\"not_found\"}");
		else if (verify(FCGX_GetParam("HTTP_AUTHORIZATION", r.envp), secret, issuer, user) < 0)
			answer(&r, 401, "{\"error\":\"unauthorized\"}");
		else
			get_project(&r, st, user, id + 1);
		FCGX_Finish_r(&r);
	}
	return 0;
}
