-- svc-api-dotseg.lua: lighttpd mod_magnet: an /api path whose dot segments climb out of /api gets the API's 404 JSON
--
-- lighttpd removes dot segments ("..", "%2e%2e", "..%2f" once %2f is decoded) before any
-- $HTTP["url"] condition sees the path, so "/api/%2e%2e/dashboard" would be served as
-- "/dashboard", the web app's page. lighttpd-svc.conf runs this script
-- (magnet.attract-raw-url-to) on the requests that fell through to the web app: when the
-- path as the client sent it (request.orig-uri) started under /api, the answer is the API's
-- own 404 (docs/api.md "Errors"), never the app. Issue 25 item 13; tested by
-- tests/e2e/test_web_serving.py (test_web_api_*_is_the_api_404).
local r = lighty.r
local orig = r.req_attr["request.orig-uri"] or ""

if orig:match("^/[Aa][Pp][Ii][/%%]") then
	r.resp_header["Content-Type"] = "application/json"
	r.resp_header["Cache-Control"] = "no-store"
	r.resp_body:set({ '{"error":"not_found","message":"Not found."}' })
	return 404
end
return 0
