# auth.mk: build fragment
