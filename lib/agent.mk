# agent.mk: the AI agent loop, its streaming provider clients (OpenAI, Anthropic) and file tools
lib_libsvc_a_SOURCES += lib/agent.h lib/agent.c lib/agent_buf.c lib/agent_sse.c lib/agent_step.c \
	lib/agent_openai.c lib/agent_anthropic.c lib/agent_tools.c
tests_unit_svc_unit_SOURCES += tests/unit/test_agent.c
EXTRA_DIST += tests/fixtures/provider_double.py
