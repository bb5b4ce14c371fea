/* err.c: the table from svc_err values to error codes, HTTP statuses and messages (docs/conventions.md "Errors"). */
#include "core/err.h"

static const struct {
	const char *code;
	int status;
	const char *message;
} errs[SVC_E__MAX] = { /* indexed by -err */
	[-SVC_OK]                  = { "ok", 200, "OK" },
	[-SVC_E_INVALID_JSON]      = { "invalid_json", 400, "The request body is not valid JSON." },
	[-SVC_E_VALIDATION]        = { "validation_failed", 400, "A field is missing or has the wrong type or value." },
	[-SVC_E_UNAUTHORIZED]      = { "unauthorized", 401, "Authentication is required or the credentials are invalid." },
	[-SVC_E_FORBIDDEN]         = { "forbidden", 403, "You are not allowed to do this." },
	[-SVC_E_NOT_FOUND]         = { "not_found", 404, "Not found." },
	[-SVC_E_METHOD]            = { "method_not_allowed", 405, "This method is not allowed on this resource." },
	[-SVC_E_CONFLICT]          = { "conflict", 409, "The request conflicts with the current state." },
	[-SVC_E_TOO_LARGE]         = { "payload_too_large", 413, "The request body is too large." },
	[-SVC_E_MEDIA_TYPE]        = { "unsupported_media_type", 415, "The request body must be application/json." },
	[-SVC_E_RATE_LIMITED]      = { "rate_limited", 429, "Too many requests; try again later." },
	[-SVC_E_INTERNAL]          = { "internal_error", 500, "An internal error occurred." },
	[-SVC_E_UNAVAILABLE]       = { "service_unavailable", 503, "The service is temporarily unavailable." },
	[-SVC_E_NO_PROVIDER]       = { "no_provider", 503, "No AI provider is configured for this workspace." },
	[-SVC_E_CREDIT]            = { "credit_exhausted", 402, "The workspace credit limit is reached." },
	[-SVC_E_MODEL_UNAVAILABLE] = { "model_unavailable", 502, "The model provider returned an error." },
	[-SVC_E_CLIENT_GONE]       = { "client_gone", 499, "The client closed the connection." },
	[-SVC_E_CANCELLED]         = { "cancelled", 499, "The work was stopped." },
	[-SVC_E_PLAN_LIMIT]        = { "plan_limit", 403, "The workspace's plan allows no more of this." },
	[-SVC_E_NOT_PUBLISHED]     = { "not_published", 409, "Publish the project first." },
	[-SVC_E_QUOTA]             = { "quota_exceeded", 403, "The workspace's quota allows no more projects." },
};

_Static_assert(SVC_E__MAX == 1 - SVC_E_QUOTA, "SVC_E__MAX counts every svc_err value; add the new one's row above");

static int idx(int err)
{
	int i = -err;
	return (i >= 0 && i < SVC_E__MAX) ? i : -SVC_E_INTERNAL;
}

const char *svc_err_code(int err) { return errs[idx(err)].code; }
int svc_err_status(int err) { return errs[idx(err)].status; }
const char *svc_err_message(int err) { return errs[idx(err)].message; }
