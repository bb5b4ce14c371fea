-- 009_email_verified.sql: when a user's e-mail address was shown to be theirs (a reset link used, a provider's verified
-- address at OAuth sign-up); OAuth sign-in links to an existing account by address only when it is set (finding 6 of issue 17).
ALTER TABLE users ADD COLUMN email_verified_at DATETIME(3) NULL AFTER email;
