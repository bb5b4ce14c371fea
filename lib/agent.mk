# agent.mk: build fragment
