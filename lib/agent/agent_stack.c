/* agent_stack.c: the system prompt's paragraph on what kind of project the agent works on: the react template's layout, another package.json project, or static files. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "core/err.h"
#include "core/fsx.h"
#include "core/util.h"

#define PACKAGE_JSON_MAX (256 * 1024)

static const char stack_static[] =
	"\nThe project is a static web app: HTML, CSS, JavaScript and assets served as plain files, with "
	"no build step and no server code. What is in the directory is what the preview shows and what "
	"is published.";

static const char stack_package[] =
	"\nThe project is a package.json project. svc installs its dependencies from the npm registry "
	"(without install scripts) and runs its \"build\" script, which must write the site into dist/: "
	"that is what is published; a \"dev\" script, when there is one, serves the preview.";

/* templates/react's layout (templates/react/README.md says the same to a person). */
static const char stack_react[] =
	"\nThe project is a React app on the field's standard stack (svc's react template): React and "
	"TypeScript, built by Vite. package.json's \"dev\" script is Vite's dev server, which serves the "
	"preview (a saved change shows up at once), and \"build\" (vite build) writes the site into dist/, "
	"which is what is published. The layout:\n"
	"- index.html: the page shell; React renders into its <div id=\"root\">; the page title is set here.\n"
	"- src/main.tsx: the entry point: mounts <App /> into #root and imports src/index.css.\n"
	"- src/App.tsx: the top-level component. Start here.\n"
	"- src/components/: one component per file, named after it (Counter in Counter.tsx), "
	"default-exported, imported with its extension: import Counter from \"./components/Counter.tsx\".\n"
	"- src/index.css: the stylesheet.\n"
	"- public/: files served as they are at the site's root (public/favicon.svg is /favicon.svg).\n"
	"- vite.config.ts and tsconfig.json: Vite with its React plugin; strict TypeScript.\n"
	"Write TypeScript: .tsx files for components, function components with hooks, typed props. "
	"Keep what the app shows in components under src/ rather than in index.html.";

static const char stack_tailwind[] =
	"\nStyle with Tailwind CSS 4 utility classes in className (\"mx-auto max-w-4xl px-6 py-4 "
	"text-slate-900\"). src/index.css starts with @import \"tailwindcss\"; there is no "
	"tailwind.config.js: theme values go into an @theme { ... } block in src/index.css, and plain CSS "
	"there only for what utilities cannot express.";

static const char stack_deps[] =
	"\nYou cannot run npm or any other command. Add no npm package unless the request needs one (React, "
	"the browser and the packages already in package.json cover most things). When one is needed, add "
	"it to package.json with a version range and delete package-lock.json, so that the next install "
	"resolves it from the npm registry and writes a new lockfile; never edit package-lock.json by hand.";

/* 1 when `name` is a key of package.json's dependencies or devDependencies. */
static int has_dependency(struct json_object *pkg, const char *name)
{
	static const char *const groups[] = { "dependencies", "devDependencies" };
	struct json_object *deps, *v;
	size_t i;

	for (i = 0; i < sizeof groups / sizeof groups[0]; i++)
		if (json_object_object_get_ex(pkg, groups[i], &deps) && json_object_is_type(deps, json_type_object) &&
		    json_object_object_get_ex(deps, name, &v))
			return 1;
	return 0;
}

int svc_agent__prompt_stack(const char *project_dir, struct svc_buf *out)
{
	struct json_object *pkg = NULL;
	char *text = NULL;
	size_t len = 0;
	int react, tailwind, error;

	if (!project_dir || !project_dir[0])
		return 0;
	error = svc_fsx_read(project_dir, "package.json", PACKAGE_JSON_MAX, &text, &len);
	if (error == SVC_E_NOT_FOUND)
		return svc_buf_adds(out, stack_static);
	/* a package.json that cannot be read or parsed is still a package.json project */
	if (error < 0 || svc_agent__json_parse(text, len, &pkg) < 0 || !json_object_is_type(pkg, json_type_object)) {
		free(text);
		json_object_put(pkg);
		return (error = svc_buf_adds(out, stack_package)) < 0 ? error : svc_buf_adds(out, stack_deps);
	}
	free(text);
	react = has_dependency(pkg, "react") && has_dependency(pkg, "vite");
	tailwind = has_dependency(pkg, "tailwindcss") || has_dependency(pkg, "@tailwindcss/vite");
	json_object_put(pkg);
	if ((error = svc_buf_adds(out, react ? stack_react : stack_package)) < 0 ||
	    (react && tailwind && (error = svc_buf_adds(out, stack_tailwind)) < 0))
		return error;
	return svc_buf_adds(out, stack_deps);
}
