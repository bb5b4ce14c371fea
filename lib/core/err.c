/* err.c: the table from svc_err values to error codes, HTTP statuses and messages (docs/conventions.md "Errors"). */
#include "core/err.h"

static const struct {
	const char *code;
	int status;
	const char *message;
} errs[SVC_E__MAX] = {
	[0] = { "ok", 200, "OK" },
	[1] = { "invalid_json", 400, "The request body is not valid JSON." },
	[2] = { "validation_failed", 400, "A field is missing or has the wrong type or value." },
	[3] = { "unauthorized", 401, "Authentication is required or the credentials are invalid." },
	[4] = { "forbidden", 403, "You are not allowed to do this." },
	[5] = { "not_found", 404, "Not found." },
	[6] = { "method_not_allowed", 405, "This method is not allowed on this resource." },
	[7] = { "conflict", 409, "The request conflicts with the current state." },
	[8] = { "payload_too_large", 413, "The request body is too large." },
	[9] = { "unsupported_media_type", 415, "The request body must be application/json." },
	[10] = { "rate_limited", 429, "Too many requests; try again later." },
	[11] = { "internal_error", 500, "An internal error occurred." },
	[12] = { "service_unavailable", 503, "The service is temporarily unavailable." },
	[13] = { "no_provider", 503, "No AI provider is configured for this workspace." },
	[14] = { "credit_exhausted", 402, "The workspace credit limit is reached." },
	[15] = { "model_unavailable", 502, "The model provider returned an error." },
	[16] = { "client_gone", 499, "The client closed the connection." },
	[17] = { "cancelled", 499, "The work was stopped." },
};

static int idx(int err)
{
	int i = -err;
	return (i >= 0 && i < SVC_E__MAX) ? i : 11;
}

const char *svc_err_code(int err) { return errs[idx(err)].code; }
int svc_err_status(int err) { return errs[idx(err)].status; }
const char *svc_err_message(int err) { return errs[idx(err)].message; }
