# agent.mk: the AI agent: loop, streaming provider clients (OpenAI, Anthropic), file tools, plans, attachments;
# chat/plan/provider handlers, secrets at rest (crypto), background jobs and the svc-worker daemon
lib_libsvc_a_SOURCES += lib/agent.h lib/agent.c lib/agent_buf.c lib/agent_sse.c lib/agent_step.c \
	lib/agent_openai.c lib/agent_anthropic.c lib/agent_tools.c lib/agent_plan.c lib/agent_attach.c lib/agent_modes.c \
	lib/api_agent.h lib/api_ai_provider.c lib/api_credits.c lib/crypto.h lib/crypto.c lib/jobs.h lib/jobs.c
tests_unit_svc_unit_SOURCES += tests/unit/test_agent.c tests/unit/test_agent_plan.c tests/unit/test_crypto.c \
	tests/unit/test_jobs.c
sbin_PROGRAMS += tools/svc-worker
tools_svc_worker_SOURCES = tools/svc-worker.c
tools_svc_worker_LDADD = $(SVC_LIBS)
EXTRA_DIST += tests/fixtures/provider_double.py tests/fixtures/agent-review-prompt.txt
