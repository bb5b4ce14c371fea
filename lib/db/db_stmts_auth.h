/* db_stmts_auth.h: statements of OAuth, password reset, API tokens and rate limits (issue 7). Included by db_stmts.h only. */

/* rate limits (lib/auth/auth_ratelimit.c): one fixed window per bucket; the IF reads the old window_start. */
/* adds hits: 1 per request, or a host's hits since it last added them (svc_ratelimit_hit_host) */
SVC_STMT(STMT_RATE_HIT,
	"INSERT INTO auth_rate_limits (bucket, window_start, hits, expires_at) VALUES (?, ?, ?, ?) "
	"ON DUPLICATE KEY UPDATE hits = IF(window_start = VALUES(window_start), hits + VALUES(hits), VALUES(hits)), "
	"expires_at = VALUES(expires_at), window_start = VALUES(window_start)")
SVC_STMT(STMT_RATE_GET,
	"SELECT window_start, hits FROM auth_rate_limits WHERE bucket = ?")
SVC_COLS(RCOL_WINDOW_START, RCOL_HITS)
SVC_STMT(STMT_RATE_CLEAR,
	"DELETE FROM auth_rate_limits WHERE bucket = ?")
SVC_STMT(STMT_RATE_PURGE,
	"DELETE FROM auth_rate_limits WHERE expires_at < ? LIMIT 1000")

/* users changed by sign-in flows and the account settings (docs/api.md "Account") */
/* what a password change, a refresh and a disconnect need to know */
SVC_STMT(STMT_AUTH_USER_CREDS,
	"SELECT email, password_hash, session_gen, "
	"(SELECT COUNT(*) FROM auth_identities i WHERE i.user_id = users.id) FROM users WHERE id = ?")
SVC_STMT(STMT_AUTH_USER_CREDS_LOCK,
	"SELECT email, password_hash, session_gen, "
	"(SELECT COUNT(*) FROM auth_identities i WHERE i.user_id = users.id) FROM users WHERE id = ? FOR UPDATE")
/* the columns of STMT_AUTH_USER_CREDS and STMT_AUTH_USER_CREDS_LOCK */
SVC_COLS(UCRCOL_EMAIL, UCRCOL_HASH, UCRCOL_GEN, UCRCOL_IDENTITIES)
SVC_STMT(STMT_AUTH_USER_SET_NAME,
	"UPDATE users SET display_name = ?, updated_at = " NOW " WHERE id = ?")
/* a new password (a change or a reset) ends every other session: their refresh tokens carry the old session_gen */
SVC_STMT(STMT_AUTH_USER_NEW_PASSWORD,
	"UPDATE users SET password_hash = ?, session_gen = session_gen + 1, updated_at = " NOW " WHERE id = ?")

/* sign-in sessions and their refresh tokens (lib/auth/auth_session.c, schema/009_sessions.sql) */
SVC_STMT(STMT_SESSION_INSERT,
	"INSERT INTO auth_sessions (id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
SVC_STMT(STMT_SESSION_EXTEND,
	"UPDATE auth_sessions SET expires_at = GREATEST(expires_at, ?) WHERE id = ?")
SVC_STMT(STMT_SESSION_REVOKE,
	"UPDATE auth_sessions SET revoked_at = ?, revoked_why = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL")
SVC_STMT(STMT_SESSION_PURGE,
	"DELETE FROM auth_sessions WHERE expires_at < ? LIMIT 100")
SVC_STMT(STMT_REFRESH_INSERT,
	"INSERT INTO auth_refresh_tokens (jti, session_id, created_at) VALUES (?, ?, ?)")
/* the rotation: only one of two racing refreshes retires the token */
SVC_STMT(STMT_REFRESH_RETIRE,
	"UPDATE auth_refresh_tokens SET retired_at = ? WHERE jti = ? AND retired_at IS NULL")
SVC_STMT(STMT_REFRESH_STATE,
	"SELECT t.session_id, s.user_id, t.retired_at, s.revoked_at, u.session_gen FROM auth_refresh_tokens t "
	"JOIN auth_sessions s ON s.id = t.session_id JOIN users u ON u.id = s.user_id WHERE t.jti = ?")
SVC_COLS(RTCOL_SESSION, RTCOL_USER, RTCOL_RETIRED, RTCOL_REVOKED, RTCOL_GEN)
/* every request with an access token: the user's generation and its session, by primary keys */
SVC_STMT(STMT_SESSION_ACCESS,
	"SELECT u.session_gen, s.id, s.revoked_at FROM users u "
	"LEFT JOIN auth_sessions s ON s.id = ? AND s.user_id = u.id WHERE u.id = ?")
SVC_COLS(SACOL_GEN, SACOL_SESSION, SACOL_REVOKED)

/* addresses an account signed in from (schema/009_login_addresses.sql): addr_hash = SHA-256 of its rate-limit key */
SVC_STMT(STMT_KNOWN_ADDR_PUT,
	"INSERT INTO auth_known_addresses (user_id, addr_hash, last_seen) VALUES (?, ?, ?) "
	"ON DUPLICATE KEY UPDATE last_seen = VALUES(last_seen)")
SVC_STMT(STMT_KNOWN_ADDR_GET,
	"SELECT 1 FROM auth_known_addresses WHERE user_id = ? AND addr_hash = ? AND last_seen > ?")
SVC_COLS(KACOL_ONE)

/* OAuth identities */
SVC_STMT(STMT_IDENTITY_GET,
	"SELECT user_id FROM auth_identities WHERE provider = ? AND subject = ?")
SVC_COLS(IDCOL_USER)
SVC_STMT(STMT_IDENTITY_INSERT,
	"INSERT INTO auth_identities (provider, subject, user_id, email, created_at, last_login_at) "
	"VALUES (?, ?, ?, ?, " NOW ", " NOW ")")
SVC_STMT(STMT_IDENTITY_TOUCH,
	"UPDATE auth_identities SET last_login_at = " NOW ", email = ? WHERE provider = ? AND subject = ?")
SVC_STMT(STMT_IDENTITY_LIST,
	"SELECT provider, email, " TS("created_at") ", " TS("last_login_at")
	" FROM auth_identities WHERE user_id = ? ORDER BY provider, created_at LIMIT 100")
SVC_COLS(ILCOL_PROVIDER, ILCOL_EMAIL, ILCOL_CREATED, ILCOL_LAST_LOGIN)
SVC_STMT(STMT_IDENTITY_OF_USER,
	"SELECT subject FROM auth_identities WHERE user_id = ? AND provider = ?")
SVC_COLS(IUCOL_SUBJECT)
SVC_STMT(STMT_IDENTITY_DELETE,
	"DELETE FROM auth_identities WHERE user_id = ? AND provider = ?")

/* password reset */
SVC_STMT(STMT_RESET_INSERT,
	"INSERT INTO password_resets (token_hash, user_id, created_at, expires_at) "
	"VALUES (?, ?, " NOW ", " NOW " + INTERVAL ? SECOND)")
SVC_STMT(STMT_RESET_USE,
	"UPDATE password_resets SET used_at = " NOW " WHERE token_hash = ? AND used_at IS NULL AND expires_at > " NOW)
SVC_STMT(STMT_RESET_USER,
	"SELECT user_id FROM password_resets WHERE token_hash = ?")
SVC_COLS(RSCOL_USER)
SVC_STMT(STMT_RESET_INVALIDATE_USER,
	"UPDATE password_resets SET used_at = " NOW " WHERE user_id = ? AND used_at IS NULL")
SVC_STMT(STMT_RESET_PURGE,
	"DELETE FROM password_resets WHERE expires_at < " NOW " - INTERVAL 1 DAY LIMIT 1000")

/* sign-ups waiting for their e-mail link (schema/014_signup_pending.sql) */
SVC_STMT(STMT_SIGNUP_INSERT,
	"INSERT INTO signup_pending (id, email, password_hash, display_name, created_at, expires_at) "
	"VALUES (?, ?, ?, ?, " NOW ", " NOW " + INTERVAL ? SECOND)")
SVC_STMT(STMT_SIGNUP_GET,
	"SELECT email FROM signup_pending WHERE id = ? AND expires_at > " NOW)
SVC_COLS(SPCOL_EMAIL)
SVC_STMT(STMT_SIGNUP_SET_TOKEN,
	"UPDATE signup_pending SET token_hash = ? WHERE id = ?")
SVC_STMT(STMT_SIGNUP_DELETE,
	"DELETE FROM signup_pending WHERE id = ?")
/* the row a link names, locked: two uses of one link cannot both find it */
SVC_STMT(STMT_SIGNUP_BY_TOKEN,
	"SELECT email, password_hash, display_name FROM signup_pending "
	"WHERE token_hash = ? AND expires_at > " NOW " FOR UPDATE")
SVC_COLS(STCOL_EMAIL, STCOL_PASSWORD_HASH, STCOL_NAME)
SVC_STMT(STMT_SIGNUP_DELETE_EMAIL,
	"DELETE FROM signup_pending WHERE email = ?")
SVC_STMT(STMT_SIGNUP_PURGE,
	"DELETE FROM signup_pending WHERE expires_at < " NOW " LIMIT 1000")

/* API tokens */
SVC_STMT(STMT_TOKEN_INSERT,
	"INSERT INTO api_tokens (id, user_id, name, token_hash, token_prefix, scopes, created_at) "
	"VALUES (?, ?, ?, ?, ?, ?, " NOW ")")
SVC_STMT(STMT_TOKEN_GET,
	"SELECT id, user_id, name, token_prefix, scopes, " TS("created_at") ", " TS("last_used_at")
	" FROM api_tokens WHERE id = ? AND user_id = ?")
SVC_STMT(STMT_TOKEN_LIST,
	"SELECT id, user_id, name, token_prefix, scopes, " TS("created_at") ", " TS("last_used_at")
	" FROM api_tokens WHERE user_id = ? ORDER BY created_at DESC, id LIMIT 1000")
/* the columns of STMT_TOKEN_GET and STMT_TOKEN_LIST */
SVC_COLS(TCOL_ID, TCOL_USER, TCOL_NAME, TCOL_PREFIX, TCOL_SCOPES, TCOL_CREATED, TCOL_LAST_USED)
SVC_STMT(STMT_TOKEN_COUNT,
	"SELECT COUNT(*) FROM api_tokens WHERE user_id = ?")
SVC_COLS(TCCOL_COUNT)
SVC_STMT(STMT_TOKEN_DELETE,
	"DELETE FROM api_tokens WHERE id = ? AND user_id = ?")
SVC_STMT(STMT_TOKEN_BY_HASH,
	"SELECT id, user_id, scopes FROM api_tokens WHERE token_hash = ?")
SVC_COLS(THCOL_ID, THCOL_USER, THCOL_SCOPES)
SVC_STMT(STMT_TOKEN_TOUCH,
	"UPDATE api_tokens SET last_used_at = " NOW " WHERE id = ? AND "
	"(last_used_at IS NULL OR last_used_at < " NOW " - INTERVAL 1 SECOND)")

/* assistant tokens (sealed with lib/auth/crypto.h; aad "assistant_tokens/sealed_token/<user id>:<provider>") */
SVC_STMT(STMT_ASSISTANT_UPSERT,
	"INSERT INTO assistant_tokens (user_id, provider, sealed_token, provider_login, created_at, updated_at) "
	"VALUES (?, ?, ?, ?, " NOW ", " NOW ") ON DUPLICATE KEY UPDATE sealed_token = VALUES(sealed_token), "
	"provider_login = VALUES(provider_login), updated_at = " NOW)
SVC_STMT(STMT_ASSISTANT_GET,
	"SELECT provider_login, " TS("updated_at") " FROM assistant_tokens WHERE user_id = ? AND provider = ?")
SVC_COLS(ASCOL_LOGIN, ASCOL_UPDATED)
/* the nonces of signed internal calls seen within twice their window (lib/auth/internal.h) */
SVC_STMT(STMT_NONCE_INSERT,
	"INSERT INTO internal_nonces (nonce, seen_at) VALUES (?, " NOW ")")
SVC_STMT(STMT_NONCE_PURGE,
	"DELETE FROM internal_nonces WHERE seen_at < " NOW " - INTERVAL 600 SECOND ORDER BY seen_at LIMIT 100")
