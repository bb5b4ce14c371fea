# fsx.mk: build fragment
