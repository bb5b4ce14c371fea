# yjs.mk: build fragment
