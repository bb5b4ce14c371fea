/* err.h: the one error enum of libsvc and its mapping to error codes and HTTP statuses (docs/conventions.md "Errors"). */
#ifndef SVC_ERR_H
#define SVC_ERR_H

/*
 * Every libsvc function that can fail returns `int`: 0 on success, or one of
 * these negative values. Callers pass a callee's error up unchanged; foreign
 * errors (MariaDB, libgit2, libcurl, OpenSSL) are translated once, at the
 * lib/ boundary that calls the library.
 */
enum svc_err {
	SVC_OK = 0,
	SVC_E_INVALID_JSON = -1,     /* 400 invalid_json */
	SVC_E_VALIDATION = -2,       /* 400 validation_failed (+ field) */
	SVC_E_UNAUTHORIZED = -3,     /* 401 unauthorized */
	SVC_E_FORBIDDEN = -4,        /* 403 forbidden */
	SVC_E_NOT_FOUND = -5,        /* 404 not_found */
	SVC_E_METHOD = -6,           /* 405 method_not_allowed */
	SVC_E_CONFLICT = -7,         /* 409 conflict */
	SVC_E_TOO_LARGE = -8,        /* 413 payload_too_large */
	SVC_E_MEDIA_TYPE = -9,       /* 415 unsupported_media_type */
	SVC_E_RATE_LIMITED = -10,    /* 429 rate_limited */
	SVC_E_INTERNAL = -11,        /* 500 internal_error */
	SVC_E_UNAVAILABLE = -12,     /* 503 service_unavailable */
	SVC_E_NO_PROVIDER = -13,     /* chat: no_provider */
	SVC_E_CREDIT = -14,          /* chat: credit_exhausted */
	SVC_E_MODEL_UNAVAILABLE = -15, /* chat: model_unavailable */
	SVC_E_CLIENT_GONE = -16,     /* the HTTP client went away mid-stream */
	SVC_E_CANCELLED = -17,       /* work stopped on request */
	SVC_E_PLAN_LIMIT = -18,      /* 403 plan_limit: the workspace's plan allows no more of this */
	SVC_E_NOT_PUBLISHED = -19,   /* 409 not_published: the project was never published */
	SVC_E_QUOTA = -20,           /* 403 quota_exceeded: the workspace's quota of projects is used up */
	SVC_E__MAX = 21
};

/* Returns the error code ("not_found", ...) of `err`; "internal_error" for unknown values. */
const char *svc_err_code(int err);

/* Returns the HTTP status for `err` (200 for SVC_OK, 500 for unknown values). */
int svc_err_status(int err);

/* Returns a default message for a person, in English, for `err`. */
const char *svc_err_message(int err);

#endif
