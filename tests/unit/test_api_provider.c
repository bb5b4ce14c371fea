/* test_api_provider.c: the AI-provider PUT's write (lib/api/api_ai_provider.c) is one transaction: the provider's row, its toolMode and the audit entry commit together or not at all, against the real MariaDB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <mysql.h>

#include "../../lib/api/api_ai_provider.c"
#include "core/util.h"
#include "unit.h"

/* The provider row of workspace `wid`: its model and tool mode into m/t (64 bytes each); 1 when there is one, 0 when not, -1 on an error. */
static int provider_row(struct svc_db *db, const char *wid, char *m, char *t)
{
	struct svc_dbv p = svc_dbv_str(wid);
	struct svc_rows *rows = NULL;
	int n;

	if (svc_db_run(db, STMT_AGENT_PROVIDER_GET, &p, 1, &rows, NULL) < 0)
		return -1;
	n = rows && rows->nrows == 1;
	if (n) {
		snprintf(m, 64, "%s", svc_rows_get(rows, 0, PVCOL_MODEL));
		snprintf(t, 64, "%s", svc_rows_get(rows, 0, PVCOL_TOOL_MODE));
	}
	svc_rows_free(rows);
	return n;
}

/*
 * A tool mode the column refuses (strict mode: "Data truncated", a real failure of the second
 * statement) takes the provider's row back: a new one is not made, an old one keeps its model.
 */
static void test_api_provider_write_is_one_transaction(void)
{
	struct svc_config cfg;
	struct svc_db *db = NULL;
	char errbuf[256], uid[37], wid[37], email[64], model[64], mode[64];
	struct svc_dbv u[4], ws[4], p[6];
	struct provider_write w = { 0 };

	if (!getenv("SVC_CONFIG") && !getenv("SVC_DB_SOCKET"))
		return;
	CU_ASSERT_FATAL(svc_config_load(&cfg, errbuf, sizeof errbuf) == 0);
	CU_ASSERT_FATAL(svc_db_open(&cfg, &db) == 0);
	svc_uuid_v4(uid);
	svc_uuid_v4(wid);
	snprintf(email, sizeof email, "unit-provider-%.8s@example.test", uid);
	u[0] = svc_dbv_str(uid);
	u[1] = svc_dbv_str(email);
	u[2] = u[3] = svc_dbv_null();
	ws[0] = svc_dbv_str(wid);
	ws[1] = svc_dbv_str("Unit provider");
	ws[2] = svc_dbv_str("team");
	ws[3] = svc_dbv_str(uid);
	CU_ASSERT_FATAL(svc_db_run(db, STMT_USER_INSERT, u, 4, NULL, NULL) == 0);
	CU_ASSERT_FATAL(svc_db_run(db, STMT_WORKSPACE_INSERT, ws, 4, NULL, NULL) == 0);
	p[0] = svc_dbv_str(wid);
	p[1] = svc_dbv_str("openai");
	p[2] = svc_dbv_str("https://models.example.test/v1");
	p[3] = svc_dbv_str("m1");
	p[4] = svc_dbv_null();
	p[5] = svc_dbv_str(uid);
	w = (struct provider_write){ STMT_AGENT_PROVIDER_PUT_KEEP_KEY, p, 6, "bogus", wid, NULL, uid, NULL };
	CU_ASSERT(svc_db_tx(db, provider_tx, &w) < 0);
	CU_ASSERT_EQUAL(provider_row(db, wid, model, mode), 0); /* neither half */
	w.mode = "text";
	w.action = "workspaces.ai_provider.key_cleared";
	w.details = json_object_new_object();
	CU_ASSERT_EQUAL(svc_db_tx(db, provider_tx, &w), 0);
	CU_ASSERT_EQUAL(provider_row(db, wid, model, mode), 1);
	CU_ASSERT_STRING_EQUAL(model, "m1");
	CU_ASSERT_STRING_EQUAL(mode, "text");
	p[3] = svc_dbv_str("m2");
	w.mode = "bogus";
	CU_ASSERT(svc_db_tx(db, provider_tx, &w) < 0);
	CU_ASSERT_EQUAL(provider_row(db, wid, model, mode), 1);
	CU_ASSERT_STRING_EQUAL(model, "m1"); /* the new model was taken back with the mode */
	CU_ASSERT_STRING_EQUAL(mode, "text");
	json_object_put(w.details);
	svc_db_close(db);
	svc_config_dispose(&cfg);
	mysql_library_end();
}

SVC_TEST_SUITE(api)
{
	CU_pSuite s = CU_add_suite("api", NULL, NULL);

	CU_add_test(s, "test_api_provider_write_is_one_transaction", test_api_provider_write_is_one_transaction);
}
