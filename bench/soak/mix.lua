-- mix.lua: the HTTP part of the soak (wrk 4.1, LuaJIT): reads, writes and sign-ins by weight,
-- with a latency histogram and status counts per kind, written as JSON by done().
--
-- Run by bench/soak/soak.py as: wrk -t N -c N -d S --timeout 10s -s mix.lua http://127.0.0.1:PORT
-- with SOAK_DATA (a Lua file returning the users, see soak.py) and SOAK_WRK_OUT (the JSON file to
-- write). One connection per thread (-t = -c), so each thread's request() and response()
-- alternate strictly and the time between them is that request's latency (wrk's response()
-- does not say which connection answered). Thread i acts as user i: it writes only to its own
-- project (one change at a time per project is the API's rule, so threads never queue behind
-- each other's commits) and reads its own projects, files and its chat project's timeline,
-- which the chat streams of soak.py fill. Between two requests a thread waits
-- SOAK_HTTP_DELAY_MS (wrk's delay()), so the offered load is paced, not a flood.
--
-- Sign-ins come from SOAK_ADDRS client addresses through X-Forwarded-For (the soak's stack
-- believes it from loopback, SVC_TRUSTED_PROXIES): the per-address login limit (10 a minute)
-- applies to them, and the 429s it answers are counted apart from errors. Every other request
-- comes from loopback, which the stack exempts from rate limits (SVC_RATE_LIMIT_EXEMPT).
-- A successful sign-in's access token replaces the thread's, so tokens never expire in a long run.

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
int clock_gettime(int clk, soak_timespec *ts);
]]
local tsbuf = ffi.new("soak_timespec")
local function now_us()
	ffi.C.clock_gettime(1, tsbuf) -- CLOCK_MONOTONIC
	return tonumber(tsbuf.tv_sec) * 1e6 + tonumber(tsbuf.tv_nsec) / 1e3
end

-- kind, weight (of 100), expected statuses
local KINDS = {
	{ "get_project", 18 }, { "list_projects", 14 }, { "list_files", 14 }, { "timeline", 14 }, { "get_file", 10 },
	{ "patch_project", 8 }, { "folder", 6 }, { "put_file", 6 }, { "direct_save", 6 },
	{ "signin", 4 },
}

local counter = 0
local threads = {}

-- main state: number the threads, hand each its index
function setup(thread)
	counter = counter + 1
	thread:set("tid", counter)
	table.insert(threads, thread)
end

-- ---------------------------------------------------------------- thread state

local data, me, token, addr_i
local pick = {}
-- globals, which done() reads with thread:get(): flat (wrk 4.1 crashes copying nested tables),
-- "<kind> n", "<kind> ok", "<kind> limited", "<kind> e <status>", "<kind> h <bucket in us>" -> count
stats, samples = {}, {}
local pending, t_sent
local seq = 0
local folder_id
local delay_ms

function init(args)
	data = dofile(os.getenv("SOAK_DATA"))
	me = data.users[((tid or 1) - 1) % #data.users + 1]
	token = me.token
	addr_i = (tid or 1) - 1
	delay_ms = tonumber(os.getenv("SOAK_HTTP_DELAY_MS") or "20")
	for _, k in ipairs(KINDS) do
		for _ = 1, k[2] do table.insert(pick, k[1]) end
	end
	math.randomseed((tid or 1) * 7919 + os.time())
end

local function bucket(us) -- two significant digits (1 % to 10 % resolution)
	if us < 100 then return math.floor(us) end
	local e = 10 ^ (math.floor(math.log10(us)) - 1)
	return math.floor(us / e) * e
end

local function json_str(s) return '"' .. s:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"' end

local function api(method, path, body, extra)
	local h = { ["Authorization"] = "Bearer " .. token }
	if body then h["Content-Type"] = "application/json" end
	if extra then for k, v in pairs(extra) do h[k] = v end end
	return wrk.format(method, "/api" .. path, h, body or (method ~= "GET" and "" or nil))
end

function request()
	local k = pick[math.random(#pick)]
	seq = seq + 1
	local p, c = me.pid, me.chat_pid
	local r
	if k == "get_project" then
		r = api("GET", "/projects/" .. (math.random(2) == 1 and p or c))
	elseif k == "list_projects" then
		r = api("GET", "/projects?workspaceId=" .. me.wid .. "&limit=20")
	elseif k == "list_files" then
		r = api("GET", "/projects/" .. p .. "/files")
	elseif k == "timeline" then
		r = api("GET", "/chat/" .. c .. "/messages?chatId=" .. me.chat_id .. "&limit=50")
	elseif k == "get_file" then
		r = api("GET", "/projects/" .. p .. "/files/index.html")
	elseif k == "patch_project" then
		r = api("PATCH", "/projects/" .. p, '{"name":"soak ' .. tid .. ' #' .. seq .. '"}')
	elseif k == "folder" then
		-- create one, then delete it: the workspace's folder count stays flat
		if folder_id then
			r = api("DELETE", "/folders/" .. folder_id)
		else
			r = api("POST", "/workspaces/" .. me.wid .. "/folders", '{"name":"soak ' .. tid .. ' #' .. seq .. '"}')
		end
	elseif k == "put_file" then
		r = api("PUT", "/projects/" .. p .. "/files/soak/notes.txt",
			'{"overwrite":true,"content":"edit ' .. seq .. ' of thread ' .. tid .. '\\n"}')
	elseif k == "direct_save" then
		r = api("POST", "/direct-save/" .. p,
			'{"filePath":"index.html","patches":[{"selector":"h1","property":"text","value":"Soak ' .. seq .. '"}]}')
	elseif k == "signin" then
		local a = data.addrs[addr_i % #data.addrs + 1]
		addr_i = addr_i + 1
		r = wrk.format("POST", "/api/auth/login", { ["Content-Type"] = "application/json", ["X-Forwarded-For"] = a },
			'{"email":' .. json_str(me.email) .. ',"password":' .. json_str(me.password) .. '}')
	end
	pending = k
	t_sent = now_us()
	return r
end

local function add(key, n) stats[key] = (stats[key] or 0) + n end

function response(status, headers, body)
	local k = pending
	if not k then return end
	local dt = now_us() - t_sent
	pending = nil
	add(k .. " n", 1)
	add(k .. " h " .. bucket(dt), 1)
	if status == 200 or status == 201 then
		add(k .. " ok", 1)
		if k == "folder" then
			folder_id = (not folder_id) and body:match('"id"%s*:%s*"([^"]+)"') or nil
		elseif k == "signin" then
			token = body:match('"accessToken"%s*:%s*"([^"]+)"') or token
		end
	elseif status == 429 and k == "signin" then
		add(k .. " limited", 1)
	else
		add(k .. " e " .. status, 1)
		if #samples < 5 then table.insert(samples, k .. " " .. status .. " " .. (body or ""):sub(1, 200)) end
	end
end

function delay()
	-- +-50 % around the mean, so the threads do not march in step
	return math.floor(delay_ms * (0.5 + math.random()))
end

-- ---------------------------------------------------------------- main state: the report

local function enc(v)
	local t = type(v)
	if t == "number" then
		if v == math.floor(v) then return string.format("%d", v) end
		return string.format("%.3f", v)
	elseif t == "string" then
		return json_str(v)
	elseif t == "table" then
		local parts = {}
		if #v > 0 then
			for _, x in ipairs(v) do table.insert(parts, enc(x)) end
			return "[" .. table.concat(parts, ",") .. "]"
		end
		for key, x in pairs(v) do table.insert(parts, json_str(tostring(key)) .. ":" .. enc(x)) end
		return "{" .. table.concat(parts, ",") .. "}"
	end
	return "null"
end

function done(summary, latency, requests)
	local kinds, errs = {}, {}
	for _, th in ipairs(threads) do
		for key, c in pairs(th:get("stats") or {}) do
			local k, field, arg = key:match("^(%S+) (%S+) ?(%S*)$")
			local m = kinds[k] or { n = 0, ok = 0, limited = 0, errors = {}, hist = {} }
			kinds[k] = m
			if field == "e" then
				m.errors[arg] = (m.errors[arg] or 0) + c
			elseif field == "h" then
				m.hist[arg] = (m.hist[arg] or 0) + c
			else
				m[field] = m[field] + c
			end
		end
		for _, x in ipairs(th:get("samples") or {}) do table.insert(errs, x) end
	end
	local out = {
		duration_us = summary.duration, requests = summary.requests, bytes = summary.bytes,
		socket_errors = summary.errors, kinds = kinds, error_samples = errs,
	}
	local f = assert(io.open(os.getenv("SOAK_WRK_OUT"), "w"))
	f:write(enc(out), "\n")
	f:close()
end
