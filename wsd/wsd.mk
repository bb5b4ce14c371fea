# wsd.mk: build fragment of the collaboration daemon (svc-wsd)
