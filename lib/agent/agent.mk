# agent.mk: lib/agent, the AI agent: a chat turn from its lock to its final event (turn), the choice of
# provider, credits and the caps on turns running at once, the loop, the streaming provider clients
# (OpenAI, Anthropic), the file tools, plans, attachments and modes, a chat's history and its compaction;
# the spending caps (budget), the loop breaker and instructions (agent_guard), the text tool protocol
# for models without tool calls (agent_text).
# May use: project, http, auth, db, core.
lib_libsvc_a_SOURCES += lib/agent/agent.h lib/agent/agent.c lib/agent/agent_sse.c \
	lib/agent/agent_step.c lib/agent/agent_guard.c lib/agent/agent_text.c lib/agent/agent_openai.c lib/agent/agent_anthropic.c lib/agent/agent_tools.c \
	lib/agent/agent_plan.c lib/agent/agent_attach.c lib/agent/agent_modes.c lib/agent/agent_integration.c lib/agent/agent_stack.c \
	lib/agent/history.h lib/agent/history.c lib/agent/turn.h lib/agent/turn.c lib/agent/provider.c \
	lib/agent/credits.h lib/agent/credits.c lib/agent/budget.h lib/agent/budget.c
tests_unit_svc_unit_SOURCES += tests/unit/test_agent.c tests/unit/test_agent_plan.c tests/unit/test_agent_stack.c
lib_libsvc_a_SOURCES += lib/agent/check.h lib/agent/agent_check.c
