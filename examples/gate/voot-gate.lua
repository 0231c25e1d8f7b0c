-- voot-guard's gate for HAProxy 2.6 or later (built with Lua): the action `voot-gate` asks
-- the gate's /_gate/auth-request about each request, with HAProxy's own httpclient (no Lua
-- modules). Load it with `lua-load` in `global`; call it where the app's requests pass:
--
--   http-request lua.voot-gate http://127.0.0.1:4181 6000
--
-- 1: the gate's base URL. 2: how long one try may wait for the gate, in milliseconds; give it
-- more than the gate's `service.timeout`, so the gate's own 503 and Retry-After arrive first.
-- HAProxy 2.6's httpclient tries up to 4 times on a refused connection or a timeout (2.6 has
-- no setting for that; later ones have httpclient.retries), so a gate that hangs is answered
-- after 4 times this.
--
-- Allowed (200): the request goes on with the gate's X-Voot-User, X-Voot-Rule and
-- X-Voot-Service (a client's own are removed first), and the variable txn.voot_gate is
-- "allowed". Any other answer goes to the client: a browser's 302 to sign in, 401 with
-- WWW-Authenticate, 403 (a browser's with the gate's page saying what the request needed,
-- as nginx's error_page 403 shows it),
-- 503 with Retry-After. A gate that cannot be reached, or answers anything else, is a 503: never let
-- through. The config denies whatever this action did not allow (a Lua error ends an action
-- without an answer, and HAProxy goes on with the next rule).

-- The gate's `headers` (user, rule, service); add the token header's name when `headers.token` is on.
local PASSED = { "x-voot-user", "x-voot-rule", "x-voot-service" }
-- What the gate reads of the client's request besides X-Original-URL and -Method.
local ASKED = { "authorization", "cookie", "accept", "x-request-id" }
-- What of the gate's refusal reaches the client (never its cookies or anything else).
local COPIED = { "www-authenticate", "retry-after", "cache-control", "content-type" }
-- What a page of the gate's carries besides those.
local PAGE = { "content-security-policy", "x-content-type-options", "referrer-policy" }
-- The gate's refusals are a few hundred bytes, its pages a few kilobytes; a reply must fit in
-- one HAProxy buffer (tune.bufsize, 16384 by default) with its headers.
local MAX_BODY = 4096
local MAX_PAGE = 12288

-- HAProxy's header tables are indexed from 0, one entry per occurrence.
local function values(headers, name)
  local list, found, i = {}, headers[name], 0
  while found ~= nil and found[i] ~= nil do
    list[#list + 1] = found[i]
    i = i + 1
  end
  return list
end

-- Copies the named headers (a table of header name to list of values) into `into`.
local function copied(from, names, into)
  for _, name in ipairs(names) do
    local list = values(from, name)
    if #list > 0 then
      into[name] = list
    end
  end
  return into
end

-- Asks the gate's `path` with `ask` (the original request's description and credentials);
-- nil when the gate cannot be reached or answers nothing HAProxy could read.
local function ask_gate(gate, path, ask, try)
  local ok, res = pcall(function()
    return core.httpclient():get({ url = gate .. path, headers = ask, timeout = try })
  end)
  if not ok or type(res) ~= "table" or type(res.headers) ~= "table" then
    return nil
  end
  return res
end

-- The gate's /_gate/forbidden page for a refused browser: asked like the check, it decides
-- the request again and says what it needed. Nil when it cannot be had (the 403 goes as it is).
local function forbidden_page(gate, ask, try)
  local page = ask_gate(gate, "/_gate/forbidden", ask, try)
  if page == nil or page.status ~= 403 or type(page.body) ~= "string" or #page.body > MAX_PAGE then
    return nil
  end
  return { status = 403, headers = copied(page.headers, PAGE, copied(page.headers, COPIED, {})), body = page.body }
end

local function unavailable(txn)
  txn:done({
    status = 503,
    headers = {
      ["retry-after"] = { "5" },
      ["cache-control"] = { "no-store" },
      ["content-type"] = { "application/json; charset=utf-8" },
    },
    body = '{"error":"temporarily_unavailable","error_description":"The authorization service is unavailable"}',
  })
end

core.register_action("voot-gate", { "http-req" }, function(txn, gate, timeout)
  local http = txn.http
  for _, name in ipairs(PASSED) do
    http:req_del_header(name)
  end
  -- Without a number the httpclient would wait without end: a config error, answered closed.
  local try = tonumber(timeout)
  if try == nil or try < 1 then
    txn:Alert("voot-gate: the second argument must be the time one try may take, in milliseconds")
    return unavailable(txn)
  end

  local headers = http:req_get_headers()
  -- The host the gate judges is the one HAProxy routed by: the config's ACL matched the one
  -- Host header (HAProxy refuses two different ones itself). None or several: no host.
  local hosts = values(headers, "host")
  if #hosts ~= 1 then
    txn:done({ status = 400, headers = { ["cache-control"] = { "no-store" } } })
    return
  end
  -- ssl_fc is "0" or "1" (as a number, 0 would be true in Lua).
  local scheme = txn.sf:ssl_fc() == "1" and "https" or "http"
  -- pathq: the path and query as sent (origin form even for an absolute URI), not decoded
  -- or resolved: the gate refuses `..`, `//` and encoded slashes itself.
  local ask = copied(headers, ASKED, {
    ["x-original-url"] = { scheme .. "://" .. hosts[1] .. txn.sf:pathq() },
    ["x-original-method"] = { txn.sf:method() },
  })

  local res = ask_gate(gate, "/_gate/auth-request", ask, try)
  if res == nil then
    return unavailable(txn)
  end
  local status = res.status
  local answer = copied(res.headers, COPIED, {})

  if status == 200 then
    for _, name in ipairs(PASSED) do
      local value = values(res.headers, name)[1]
      if value ~= nil and value ~= "" then
        http:req_set_header(name, value)
      end
    end
    txn:set_var("txn.voot_gate", "allowed")
    return
  end
  local location = values(res.headers, "location")[1]
  if status == 401 and location ~= nil then
    -- A browser without a session: the gate names where to sign in (nginx's error_page 401).
    return txn:done({ status = 302, headers = { ["location"] = { location }, ["cache-control"] = { "no-store" } } })
  end
  local retry_after = values(res.headers, "retry-after")[1]
  local known = status == 401 or status == 403
  if status == 503 then
    -- The gate's own 503 (the group service failed) carries the time to wait; keep it.
    known = retry_after ~= nil and #retry_after <= 6 and string.match(retry_after, "^%d+$") ~= nil
  end
  if not known then
    -- The gate answers 200, 401, 403 or 503 here; anything else (HAProxy's own 503 or 504
    -- when the gate cannot be reached or is too slow) leaves the answer unknown.
    return unavailable(txn)
  end
  local accept = values(headers, "accept")[1]
  if status == 403 and accept ~= nil and string.find(accept, "text/html", 1, true) ~= nil then
    local page = forbidden_page(gate, ask, try)
    if page ~= nil then
      return txn:done(page)
    end
  end
  local body = res.body
  if type(body) ~= "string" or #body > MAX_BODY then
    body = ""
    answer["content-type"] = nil
  end
  txn:done({ status = status, headers = answer, body = body })
end, 2)
