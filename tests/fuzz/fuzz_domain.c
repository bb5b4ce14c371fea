/* fuzz_domain.c: libFuzzer target of the custom-domain name rules: svc_domain_normalize (hostname, IP, SVC_DOMAIN, libpsl) and svc_domain_reserved. */
/*
 * Input: one byte of flags, then the candidate name (NUL bytes cut it, as a JSON string cannot hold
 * them). Flag bit 0 picks SVC_DOMAIN ("svc.example.net" or "co.uk", a public suffix). Every name
 * normalize accepts is checked again: normalising it is a fixed point, it is at most 253 bytes of
 * [a-z0-9.-], and svc_domain_reserved() answers for it; the PSL lookups are driven on raw input too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#include "core/config.h"
#include "core/err.h"
#include "core/psl.h"
#include "project/domains.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct svc_config cfg;
	char in[600], out[256], again[256], why[512];
	const char *svc_domain;
	size_t n, i;
	int err;

	if (size < 1)
		return 0;
	svc_domain = (data[0] & 1) ? "co.uk" : "svc.example.net";
	n = size - 1 < sizeof in - 1 ? size - 1 : sizeof in - 1;
	memcpy(in, data + 1, n);
	in[n] = '\0';
	if (!cfg.cname_target)
		svc_config_defaults(&cfg);
	cfg.app_url = "https://app.example.com";
	cfg.base_url = "https://app.example.com/api";
	cfg.ws_url = "wss://live.example.com";
	cfg.domain = svc_domain;
	err = svc_domain_normalize(in, svc_domain, out, sizeof out, why, sizeof why);
	if (err != 0 && err != SVC_E_VALIDATION && err != SVC_E_INTERNAL)
		abort();
	if (err == SVC_E_VALIDATION && strlen(why) == 0)
		abort(); /* every refusal says why */
	if (err == 0) {
		if (strlen(out) > 253)
			abort();
		for (i = 0; out[i]; i++)
			if (!((out[i] >= 'a' && out[i] <= 'z') || (out[i] >= '0' && out[i] <= '9') || out[i] == '-' || out[i] == '.'))
				abort();
		if (svc_domain_normalize(out, svc_domain, again, sizeof again, why, sizeof why) != 0 || strcmp(out, again) != 0)
			abort(); /* normalising is a fixed point */
		(void)svc_domain_reserved(&cfg, out, why, sizeof why);
	}
	/* the PSL lookups of lib/core/psl.c on the raw bytes */
	if (svc_psl()) {
		(void)psl_is_public_suffix(svc_psl(), in);
		(void)psl_registrable_domain(svc_psl(), in);
	}
	(void)svc_psl_shared_site(in, svc_domain, why, sizeof why);
	(void)svc_domain_reserved(&cfg, in, why, sizeof why);
	return 0;
}
