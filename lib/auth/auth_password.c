/* auth_password.c: Argon2id password hashes (libsodium crypto_pwhash_str), OWASP minimum parameters. */
#include <pthread.h>
#include <string.h>

#include <sodium.h>

#include "auth/auth.h"
#include "core/err.h"

#define PWHASH_OPSLIMIT 2ULL                    /* t=2 */
#define PWHASH_MEMLIMIT ((size_t)19456 * 1024)  /* m=19456 KiB = 19 MiB */
#define ARGON2ID_PREFIX "$argon2id$"

_Static_assert(SVC_AUTH_HASH_MAX == crypto_pwhash_STRBYTES,
	       "SVC_AUTH_HASH_MAX must be libsodium's crypto_pwhash_STRBYTES");

static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;
static char dummy_hash[crypto_pwhash_STRBYTES];
static int dummy_ok;

/* sodium_init() is idempotent and thread-safe: 0 first time, 1 after. */
static int sodium_ready(void)
{
	return sodium_init() >= 0;
}

static int hash_argon2id(char out[crypto_pwhash_STRBYTES], const char *password, size_t len)
{
	return crypto_pwhash_str_alg(out, password, len, PWHASH_OPSLIMIT, PWHASH_MEMLIMIT,
				     crypto_pwhash_ALG_ARGON2ID13);
}

/* The hash verified for unknown users, made once with the same parameters as real ones. */
static void dummy_make(void)
{
	static const char pw[] = "svc-dummy-password-for-unknown-users";

	dummy_ok = sodium_ready() && hash_argon2id(dummy_hash, pw, sizeof(pw) - 1) == 0;
}

int svc_auth_password_hash(const char *password, size_t len, char *out)
{
	char buf[crypto_pwhash_STRBYTES];
	int error = SVC_E_INTERNAL;

	if (!out || (!password && len > 0) || len > crypto_pwhash_PASSWD_MAX)
		goto done;
	if (!sodium_ready())
		goto done;
	if (hash_argon2id(buf, password ? password : "", len) != 0)
		goto done;   /* out of memory */
	memcpy(out, buf, sizeof(buf));
	error = 0;
done:
	sodium_memzero(buf, sizeof(buf));
	return error;
}

int svc_auth_password_verify(const char *hash, const char *password, size_t len)
{
	if ((!password && len > 0) || len > crypto_pwhash_PASSWD_MAX)
		return SVC_E_UNAUTHORIZED;
	if (!password)
		password = "";
	if (!sodium_ready())
		return SVC_E_UNAUTHORIZED;
	if (!hash) {
		/* Unknown account: spend the same time as a real check, then refuse. */
		pthread_once(&dummy_once, dummy_make);
		if (dummy_ok) {
			int ignored = crypto_pwhash_str_verify(dummy_hash, password, len);

			(void)ignored;
		}
		return SVC_E_UNAUTHORIZED;
	}
	if (strnlen(hash, SVC_AUTH_HASH_MAX) >= SVC_AUTH_HASH_MAX ||
	    strncmp(hash, ARGON2ID_PREFIX, sizeof(ARGON2ID_PREFIX) - 1) != 0)
		return SVC_E_UNAUTHORIZED;
	if (crypto_pwhash_str_verify(hash, password, len) != 0)
		return SVC_E_UNAUTHORIZED;
	return 0;
}
