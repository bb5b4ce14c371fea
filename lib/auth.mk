# auth.mk: session tokens (HS256 JWT, libjwt), password hashes (Argon2id), API tokens, OAuth, rate limits, auth log, mail
lib_libsvc_a_SOURCES += lib/auth_jwt.c lib/auth_password.c lib/auth.h lib/auth_config.c lib/auth_client.c \
	lib/auth_log.c lib/auth_ratelimit.c lib/auth_tokens.c lib/auth_oauth.c lib/mail.c lib/mail.h
tests_unit_svc_unit_SOURCES += tests/unit/test_auth.c tests/unit/test_auth_client.c tests/unit/test_auth_tokens.c \
	tests/unit/test_auth_oauth.c
