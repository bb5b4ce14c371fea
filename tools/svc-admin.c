/* svc-admin.c: operator commands: grant or revoke the platform-admin flag of a user by e-mail. */
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "db/db.h"
#include "core/err.h"
#include "core/log.h"

static int usage(void)
{
	fprintf(stderr, "usage: svc-admin grant-platform-admin EMAIL\n"
			"       svc-admin revoke-platform-admin EMAIL\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	struct svc_dbv p[2];
	char errbuf[256], email[256];
	struct svc_rows *user = NULL;
	size_t i, len;
	int grant, rc = 1;

	svc_log_init("svc-admin");
	if (argc != 3)
		return usage();
	if (strcmp(argv[1], "grant-platform-admin") == 0)
		grant = 1;
	else if (strcmp(argv[1], "revoke-platform-admin") == 0)
		grant = 0;
	else
		return usage();
	len = strlen(argv[2]);
	if (len < 3 || len >= sizeof email || !strchr(argv[2], '@')) {
		fprintf(stderr, "svc-admin: not an e-mail address: %s\n", argv[2]);
		return 2;
	}
	/* e-mails are stored in lower case (POST /auth/signup) */
	for (i = 0; i <= len; i++)
		email[i] = (char)((argv[2][i] >= 'A' && argv[2][i] <= 'Z') ? argv[2][i] - 'A' + 'a' : argv[2][i]);
	if (svc_config_load(&cfg, errbuf, sizeof errbuf) < 0) {
		fprintf(stderr, "svc-admin: %s\n", errbuf);
		return 1;
	}
	if (svc_db_open(&cfg, &db) < 0) {
		fprintf(stderr, "svc-admin: cannot connect to the database\n");
		goto done;
	}
	p[0] = svc_dbv_str(email);
	if (svc_db_run(db, STMT_USER_BY_EMAIL, p, 1, &user, NULL) < 0) {
		fprintf(stderr, "svc-admin: the lookup failed\n");
		goto done;
	}
	if (!user || user->nrows != 1) {
		fprintf(stderr, "svc-admin: no user with the e-mail %s\n", email);
		goto done;
	}
	p[0] = svc_dbv_i64(grant);
	p[1] = svc_dbv_str(email);
	if (svc_db_run(db, STMT_USER_SET_PLATFORM_ADMIN, p, 2, NULL, NULL) < 0) {
		fprintf(stderr, "svc-admin: the update failed\n");
		goto done;
	}
	svc_log_info("svc-admin: %s platform admin user=\"%s\"", grant ? "granted" : "revoked", email);
	printf("%s: platform admin %s\n", email, grant ? "granted" : "revoked");
	rc = 0;
done:
	svc_rows_free(user);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	return rc;
}
