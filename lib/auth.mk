# auth.mk: session tokens (HS256 JWT, libjwt) and password hashes (Argon2id, libsodium)
lib_libsvc_a_SOURCES += lib/auth_jwt.c lib/auth_password.c lib/auth.h
tests_unit_svc_unit_SOURCES += tests/unit/test_auth.c
