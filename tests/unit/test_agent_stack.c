/* test_agent_stack.c: the system prompt's paragraph on the kind of project (lib/agent/agent_stack.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "agent/agent.h"
#include "core/err.h"
#include "core/util.h"
#include "unit.h"

static char dir[64];

/* A fresh temporary project directory holding package.json with `pkg` (none when NULL). */
static void project(const char *pkg)
{
	char path[128];
	FILE *f;

	snprintf(dir, sizeof dir, "/tmp/svc-stack-XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	if (!pkg)
		return;
	snprintf(path, sizeof path, "%s/package.json", dir);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(pkg, f);
	fclose(f);
}

static void project_remove(void)
{
	char path[128];

	snprintf(path, sizeof path, "%s/package.json", dir);
	unlink(path);
	rmdir(path); /* the test that made it a directory */
	unlink(path);
	rmdir(dir);
}

/* The paragraph for the project made by project(), in a malloc'd string the caller frees. */
static char *paragraph(void)
{
	struct svc_buf b;
	char *s;

	svc_buf_init(&b, SVC_AGENT__STACK_MAX);
	CU_ASSERT_EQUAL(svc_agent__prompt_stack(dir, &b), 0);
	CU_ASSERT(b.len > 0 && b.len <= SVC_AGENT__STACK_MAX);
	s = strdup(svc_buf_str(&b));
	svc_buf_dispose(&b);
	return s;
}

static void test_agent_stack_static_without_package_json(void)
{
	char *s;

	project(NULL);
	s = paragraph();
	CU_ASSERT(strstr(s, "static web app") != NULL);
	CU_ASSERT(strstr(s, "no build step") != NULL);
	CU_ASSERT(strstr(s, "React") == NULL && strstr(s, "npm") == NULL);
	free(s);
	project_remove();
}

static void test_agent_stack_react_template_layout(void)
{
	char *s;

	project("{\"name\": \"app\", \"dependencies\": {\"react\": \"^19.2.0\", \"react-dom\": \"^19.2.0\"},"
		" \"devDependencies\": {\"vite\": \"^6.4.0\", \"@tailwindcss/vite\": \"^4.1.0\", \"tailwindcss\": \"^4.1.0\"}}");
	s = paragraph();
	CU_ASSERT(strstr(s, "React") != NULL && strstr(s, "Vite") != NULL && strstr(s, "TypeScript") != NULL);
	CU_ASSERT(strstr(s, "src/App.tsx") != NULL && strstr(s, "src/main.tsx") != NULL && strstr(s, "index.html") != NULL);
	CU_ASSERT(strstr(s, "Tailwind CSS") != NULL && strstr(s, "@theme") != NULL);
	CU_ASSERT(strstr(s, "delete package-lock.json") != NULL);
	CU_ASSERT(strstr(s, "static web app") == NULL);
	free(s);
	project_remove();
}

static void test_agent_stack_react_without_tailwind_has_no_tailwind_rules(void)
{
	char *s;

	project("{\"dependencies\": {\"react\": \"18.3.1\", \"vite\": \"5.4.10\"}}");
	s = paragraph();
	CU_ASSERT(strstr(s, "src/App.tsx") != NULL);
	CU_ASSERT(strstr(s, "Tailwind") == NULL);
	free(s);
	project_remove();
}

static void test_agent_stack_other_package_json(void)
{
	static const char *const pkgs[] = {
		"{\"name\": \"site\", \"scripts\": {\"build\": \"node build.mjs\"}}",
		"{\"dependencies\": {\"react\": \"^19.0.0\"}}",      /* React without Vite: not the template's layout */
		"{\"dependencies\": [\"react\", \"vite\"]}",          /* not an object */
		"{\"devDependencies\": {\"vite\": \"^6\"}} trailing", /* not JSON */
		"[]",
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof pkgs / sizeof pkgs[0]; i++) {
		project(pkgs[i]);
		s = paragraph();
		CU_ASSERT(strstr(s, "package.json project") != NULL);
		CU_ASSERT(strstr(s, "dist/") != NULL && strstr(s, "delete package-lock.json") != NULL);
		CU_ASSERT(strstr(s, "src/App.tsx") == NULL && strstr(s, "static web app") == NULL);
		free(s);
		project_remove();
	}
}

static void test_agent_stack_package_json_directory_and_no_dir(void)
{
	struct svc_buf b;
	char path[128], *s;

	project(NULL);
	snprintf(path, sizeof path, "%s/package.json", dir);
	CU_ASSERT_EQUAL(mkdir(path, 0755), 0);
	s = paragraph(); /* not a regular file: as if there were none */
	CU_ASSERT(strstr(s, "static web app") != NULL);
	free(s);
	project_remove();
	svc_buf_init(&b, SVC_AGENT__STACK_MAX);
	CU_ASSERT_EQUAL(svc_agent__prompt_stack(NULL, &b), 0);
	CU_ASSERT_EQUAL(svc_agent__prompt_stack("", &b), 0);
	CU_ASSERT_EQUAL(b.len, 0);
	svc_buf_dispose(&b);
	/* a buffer too small for the paragraph is an error, not a cut paragraph */
	project("{\"dependencies\": {\"react\": \"1\", \"vite\": \"1\"}}");
	svc_buf_init(&b, 64);
	CU_ASSERT_EQUAL(svc_agent__prompt_stack(dir, &b), SVC_E_TOO_LARGE);
	svc_buf_dispose(&b);
	project_remove();
}

SVC_TEST_SUITE(agent_stack)
{
	CU_pSuite s = CU_add_suite("agent_stack", NULL, NULL);

	CU_add_test(s, "test_agent_stack_static_without_package_json", test_agent_stack_static_without_package_json);
	CU_add_test(s, "test_agent_stack_react_template_layout", test_agent_stack_react_template_layout);
	CU_add_test(s, "test_agent_stack_react_without_tailwind_has_no_tailwind_rules",
		    test_agent_stack_react_without_tailwind_has_no_tailwind_rules);
	CU_add_test(s, "test_agent_stack_other_package_json", test_agent_stack_other_package_json);
	CU_add_test(s, "test_agent_stack_package_json_directory_and_no_dir", test_agent_stack_package_json_directory_and_no_dir);
}
