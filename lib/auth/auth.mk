# auth.mk: lib/auth, who the caller is and what they may do: session tokens (HS256 JWT, libjwt), password
# hashes (Argon2id), API tokens, OAuth, rate limits, the auth log, the permission module (perm), signed
# internal calls (internal), secrets sealed at rest (crypto), preview tokens (preview), the caller lib/
# functions act for (caller) and the svc-worker jobs that mail reset and sign-up links (auth_mail).
# May use: db, core.
lib_libsvc_a_SOURCES += lib/auth/auth.h lib/auth/auth_jwt.c lib/auth/auth_password.c lib/auth/auth_config.c \
	lib/auth/auth_client.c lib/auth/auth_log.c lib/auth/auth_ratelimit.c lib/auth/auth_tokens.c lib/auth/auth_oauth.c \
	lib/auth/auth_session.c lib/auth/auth_shm.c lib/auth/auth_mail.c \
	lib/auth/perm.c lib/auth/perm.h lib/auth/internal.c lib/auth/internal.h lib/auth/crypto.c lib/auth/crypto.h lib/auth/crypto_rotate.c \
	lib/auth/preview.c lib/auth/preview.h lib/auth/caller.c lib/auth/caller.h
tests_unit_svc_unit_SOURCES += tests/unit/test_auth.c tests/unit/test_auth_client.c tests/unit/test_auth_tokens.c \
	tests/unit/test_auth_oauth.c tests/unit/test_perm.c tests/unit/test_internal.c tests/unit/test_crypto.c \
	tests/unit/test_preview.c
