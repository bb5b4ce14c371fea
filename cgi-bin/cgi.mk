# cgi.mk: build fragment
