#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cordon's filtering proxy (--allow-domain): HTTP absolute-form requests, CONNECT and
# SOCKS5 with names resolved by cordon; --deny-domain first; 403 naming the domain and the
# flag; special addresses refused unless named exactly; --network-log; the counts in
# --status-json; malformed requests. The origin servers are the test's own on 127.0.0.1,
# and every name comes from --add-host: nothing is looked up in DNS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/netlib.sh"

command -v curl >/dev/null 2>&1 || CURL_MISSING=1

need_curl() {
  [ -z "${CURL_MISSING:-}" ] || skip_case "curl is not installed (./bootstrap.sh installs it)"
}

# proxied ARGS...: cordon run with the test origin reachable as api.test (exactly allowed,
# so its loopback address is allowed too), a log and a status file.
proxied() {
  crun run --allow-domain api.test --add-host "api.test=127.0.0.1" --network-log "$CT/log" \
    --status-json "$CT/st.json" "$@"
}

t_http_allowed_and_refused() {
  need_curl
  start_py_server O "$HTTP_SERVE"
  proxied -- sh -c 'curl -sS "http://api.test:$1/a?b=c"; curl -sS -D - "http://other.test:$1/x"' sh "$O"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_contains "$OUT" "ok GET /a?b=c host=api.test:$O" "the allowed request reached the origin, rewritten to origin-form"
  assert_contains "$OUT" "HTTP/1.1 403 Forbidden" "the refused request's status"
  assert_contains "$OUT" "cordon: the sandbox refused other.test" "the refusal names the domain"
  assert_contains "$OUT" "--allow-domain other.test" "the refusal names the flag"
  assert_contains "$OUT" "Proxy-Status: cordon; error=http_request_denied" "Proxy-Status"
  assert_eq "$(json_lines "$CT/log" '[(e["kind"], e["host"], e["port"], e["decision"]) for e in L]')" \
    "[('http', 'api.test', $O, 'allowed'), ('http', 'other.test', $O, 'refused')]" "the log"
  assert_eq "$(json_get "$CT/st.json" network)" '{"allowed": 1, "refused": 1, "failed": 0}' "status-json counts"
}

t_connect_and_socks5() {
  need_curl
  start_py_server O "$HTTP_SERVE"
  # -p: a CONNECT tunnel; socks5h: the name resolved by the proxy (cordon)
  proxied -- sh -c 'curl -sS -p "http://api.test:$1/t"; curl -sS -x "$ALL_PROXY" "http://api.test:$1/s";
    curl -sS -p "http://evil.test:$1/" 2>&1; echo "curl $?"; curl -sS -x "$ALL_PROXY" "http://evil.test:$1/" 2>&1; echo "curl $?"' sh "$O"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_contains "$OUT" "ok GET /t host=api.test:$O" "through CONNECT"
  assert_contains "$OUT" "ok GET /s host=api.test:$O" "through SOCKS5"
  assert_contains "$OUT" "CONNECT tunnel failed, response 403" "a refused CONNECT"
  assert_contains "$OUT" "curl 97" "a refused SOCKS5 request (curl: proxy handshake error)"
  assert_eq "$(json_lines "$CT/log" '[(e["kind"], e["host"], e["decision"]) for e in L]')" \
    "[('connect', 'api.test', 'allowed'), ('socks5', 'api.test', 'allowed'), ('connect', 'evil.test', 'refused'), ('socks5', 'evil.test', 'refused')]" "the log"
  assert_eq "$(json_get "$CT/st.json" network)" '{"allowed": 2, "refused": 2, "failed": 0}' "status-json counts"
}

t_refused_connect_body() {
  start_py_server O "$HTTP_SERVE"
  # a raw CONNECT: the whole refusal, body included
  proxied -- "$PY" -c '
import os, socket
c = socket.create_connection(("127.0.0.1", int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])))
c.sendall(b"CONNECT registry.evil.test:443 HTTP/1.1\r\nHost: registry.evil.test:443\r\n\r\n")
print(c.makefile("rb").read().decode())
'
  assert_contains "$OUT" "HTTP/1.1 403" "status"
  assert_contains "$OUT" "cordon: the sandbox refused registry.evil.test: it is not among the allowed domains; to allow it, run cordon with --allow-domain registry.evil.test" "body"
}

t_wildcard_and_deny() {
  need_curl
  start_py_server O "$HTTP_SERVE"
  # *.example.test lets subdomains through, not the apex; --deny-domain wins; a wildcard
  # never lets a loopback address through unless the address is named too
  crun run --allow-domain '*.example.test' --deny-domain bad.example.test --allow-domain 127.0.0.1 \
    --add-host a.example.test=127.0.0.1 --add-host b.c.example.test=127.0.0.1 --add-host bad.example.test=127.0.0.1 \
    --add-host example.test=127.0.0.1 --network-log "$CT/log" -- sh -c '
    for h in a.example.test b.c.example.test bad.example.test example.test; do
      curl -sS "http://$h:$1/" | head -n 1; echo; done' sh "$O"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_contains "$OUT" "ok GET / host=a.example.test:$O" "a subdomain"
  assert_contains "$OUT" "ok GET / host=b.c.example.test:$O" "a deeper subdomain"
  assert_contains "$OUT" "cordon: the sandbox refused bad.example.test: refused by --deny-domain bad.example.test" "deny first"
  assert_contains "$OUT" "cordon: the sandbox refused example.test: it is not among the allowed domains" "the apex"
  # without the address named, the wildcard's loopback answer is refused
  crun run --allow-domain '*.example.test' --add-host a.example.test=127.0.0.1 -- \
    curl -sS "http://a.example.test:$O/"
  assert_contains "$OUT" "it resolves to 127.0.0.1, a loopback address; such destinations are allowed only when named exactly: --allow-domain a.example.test (or --allow-domain 127.0.0.1)" "special address"
}

t_special_addresses_refused() {
  need_curl
  # no connection is attempted: each is refused by the rules before any connect
  crun run --allow-domain '*.x.test' --add-host meta.x.test=169.254.169.254 --add-host lan.x.test=192.168.1.1 \
    --add-host mc.x.test=224.0.0.1 --add-host six.x.test=fe80::1 --network-log "$CT/log" -- sh -c '
    for h in meta.x.test lan.x.test mc.x.test six.x.test 169.254.169.254 10.0.0.1; do
      curl -sS "http://$h/latest/meta-data/" | head -n 1; echo; done'
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_contains "$OUT" "169.254.169.254, a link-local address" "cloud metadata by name"
  assert_contains "$OUT" "192.168.1.1, a private address" "a private address"
  assert_contains "$OUT" "224.0.0.1, a multicast or broadcast address" "multicast"
  assert_contains "$OUT" "fe80::1, a link-local address" "IPv6 link-local"
  assert_contains "$OUT" "refused 169.254.169.254: it is not among the allowed domains" "the literal address"
  assert_eq "$(json_lines "$CT/log" 'sorted(set(e["decision"] for e in L))')" "['refused']" "all refused"
  assert_eq "$(json_lines "$CT/log" 'len(L)')" 6 "one line each"
}

t_env_for_tools() {
  crun run --allow-domain example.com -- sh -c 'env | grep -i -e proxy | sort'
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  local v
  for v in HTTP_PROXY=http://127.0.0.1:3128 http_proxy=http://127.0.0.1:3128 HTTPS_PROXY=http://127.0.0.1:3128 \
    https_proxy=http://127.0.0.1:3128 ALL_PROXY=socks5h://127.0.0.1:3128 all_proxy=socks5h://127.0.0.1:3128 \
    NO_PROXY=localhost,127.0.0.1,::1 no_proxy=localhost,127.0.0.1,::1 npm_config_proxy=http://127.0.0.1:3128 \
    npm_config_https_proxy=http://127.0.0.1:3128 YARN_HTTP_PROXY=http://127.0.0.1:3128 \
    YARN_HTTPS_PROXY=http://127.0.0.1:3128 PIP_PROXY=http://127.0.0.1:3128; do
    assert_contains "$OUT" "$v" "the command's environment"
  done
  # a proxy variable the command was given points at cordon's proxy too
  crun run --allow-domain example.com --env FTP_PROXY=http://127.0.0.1:1 -- sh -c 'echo $FTP_PROXY'
  assert_eq "$OUT" "http://127.0.0.1:3128" "a given proxy variable"
  # the proxy moves off a forwarded port
  crun run --allow-domain example.com --forward-port 3128 -- sh -c 'echo $HTTPS_PROXY'
  assert_eq "$OUT" "http://127.0.0.1:30000" "the proxy's port when 3128 is forwarded"
}

t_bad_patterns() {
  local v
  for v in '*' '*.com' '*.' 'a.*.example.com' 'https://example.com' 'example.com/path' 'example.com:443' \
    'exa mple.com' '' '*.127.0.0.1' '0x7f.1' 'a..b'; do
    expect_exit 125 run --allow-domain "$v" -- true
    assert_cordon_stderr
  done
  expect_exit 125 run --allow-domain '*' -- true
  assert_contains "$ERR" "would match every domain" "'*'"
  expect_exit 125 run --allow-domain '*.com' -- true
  assert_contains "$ERR" "would match a whole top-level domain" "'*.com'"
  expect_exit 125 run --network none --allow-domain example.com -- true
  assert_contains "$ERR" "allowed domains need the proxy network" "with --network none"
  assert_contains "$ERR" "(--allow-domain)" "with --network none: the flag"
  expect_exit 125 run --network host --allow-domain example.com -- true
  expect_exit 125 run --network proxy --deny-domain example.com --env HTTP_PROXY=http://127.0.0.1:1 -- true
  assert_contains "$ERR" "denied domains only narrow the allowed ones" "--deny-domain alone"
  expect_exit 125 run --allow-domain a.test --add-host a.test=nope -- true
  expect_exit 125 run --allow-domain a.test --add-host 1.2.3.4=1.2.3.4 -- true
  expect_exit 125 run --allow-domain a.test --network-log "$CT" -- true
}

# Inside: send each argument (Python bytes literals) on its own connection to the proxy and
# print the first line of each answer; one connection stays open with half a request
# throughout, which must not stall the others.
MALFORMED='
import os, socket, sys
port = int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])
slow = socket.create_connection(("127.0.0.1", port))
slow.sendall(b"GET http://api.test/ HTTP/1.1\r\nHost: a")
for arg in sys.argv[1:]:
    c = socket.create_connection(("127.0.0.1", port), timeout=10)
    c.sendall(eval(arg))
    try:
        line = c.makefile("rb").readline().rstrip(b"\r\n")
    except Exception as e:
        line = "error %s" % type(e).__name__
    print(repr(line))
    c.close()
slow.close()
'

t_malformed_requests() {
  start_py_server O "$HTTP_SERVE"
  proxied -- "$PY" -c "$MALFORMED" \
    'b"\x00\x01\x02garbage\r\n\r\n"' \
    'b"GET / HTTP/1.1\r\nHost: api.test\r\n\r\n"' \
    'b"GET http://api.test/ HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n"' \
    'b"GET http://api.test/ HTTP/2.0\r\n\r\n"' \
    'b"GET http://user@api.test/ HTTP/1.1\r\n\r\n"' \
    'b"POST http://api.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"' \
    'b"GET http://api.test/ HTTP/1.1\r\n folded: x\r\n\r\n"' \
    'b"CONNECT api.test HTTP/1.1\r\n\r\n"' \
    'b"GET ftp://api.test/ HTTP/1.1\r\n\r\n"' \
    'b"\x05\x01\x02"' \
    'b"\x05\x01\x00\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50"' \
    'b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00"' \
    "b\"GET http://api.test:$O/ok HTTP/1.1\\r\\n\\r\\n\""
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_eq "$OUT" "b'HTTP/1.1 400 Bad Request'
b'HTTP/1.1 400 Bad Request'
b'HTTP/1.1 431 Request Header Fields Too Large'
b'HTTP/1.1 505 HTTP Version Not Supported'
b'HTTP/1.1 400 Bad Request'
b'HTTP/1.1 400 Bad Request'
b'HTTP/1.1 400 Bad Request'
b'HTTP/1.1 400 Bad Request'
b'HTTP/1.1 501 Not Implemented'
b'\x05\xff'
b'\x05\x00\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00'
b'\x00[\x00\x00\x00\x00\x00\x00'
b'HTTP/1.1 200 OK'" "the answers"
  # every one of them logged, the last one allowed
  assert_eq "$(json_lines "$CT/log" '[e["decision"] for e in L][-1]')" allowed "the last request"
  assert_eq "$(json_lines "$CT/log" 'sum(e["decision"] == "refused" for e in L)')" 12 "refusals logged"
}

t_proxy_upstream_down() {
  need_curl
  local free
  free=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  proxied -- sh -c 'curl -sS -D - "http://api.test:$1/"; curl -sS -x "$ALL_PROXY" "http://api.test:$1/" 2>&1; echo "curl $?"' sh "$free"
  assert_contains "$OUT" "HTTP/1.1 502 Bad Gateway" "HTTP"
  assert_contains "$OUT" "cannot connect to api.test (127.0.0.1) port $free: Connection refused" "the reason"
  assert_contains "$OUT" "curl 97" "SOCKS5"
  assert_eq "$(json_get "$CT/st.json" network)" '{"allowed": 0, "refused": 0, "failed": 2}' "counts"
}

t_explain_network() {
  expect_ok explain --allow-domain '*.example.com' --deny-domain bad.example.com --add-host db.example.com=10.0.0.5 \
    --forward-port 5432 --publish-port 127.0.0.1:8000:3000 --network-log /tmp/log
  assert_contains "$OUT" "network     proxy" "the mode"
  assert_contains "$OUT" "proxy    127.0.0.1:3128" "the proxy"
  assert_contains "$OUT" "allow    *.example.com" "allow"
  assert_contains "$OUT" "deny     bad.example.com  (checked first)" "deny"
  assert_contains "$OUT" "host     db.example.com = 10.0.0.5" "add-host"
  assert_contains "$OUT" "publish  host 127.0.0.1:8000" "publish"
  assert_contains "$OUT" "forward  127.0.0.1:5432" "forward"
  assert_contains "$OUT" "HTTPS_PROXY=http://127.0.0.1:3128" "the environment"
}

t_settings_keys() {
  need_curl
  start_py_server O "$HTTP_SERVE"
  printf '{"sandbox": {"allowedDomains": ["api.test"], "addHosts": ["api.test=127.0.0.1"],\n "networkLog": "%s"}}\n' \
    "$CT/log" >"$CT/s.json"
  crun run --settings "$CT/s.json" -- sh -c 'curl -sS "http://api.test:$1/s"; curl -sS "http://no.test:$1/"' sh "$O"
  assert_contains "$OUT" "ok GET /s host=api.test:$O" "allowed by the settings file"
  assert_contains "$OUT" "--allow-domain no.test" "refused"
  assert_eq "$(json_lines "$CT/log" 'len(L)')" 2 "the settings' network log"
  printf '{"sandbox": {"allowedDomains": ["*.com"]}}\n' >"$CT/bad.json"
  expect_exit 125 run --settings "$CT/bad.json" -- true
  assert_contains "$ERR" "bad.json:1: \"sandbox.allowedDomains[0]\"" "the message names the file and key"
}

t_resolver() {
  need_curl
  start_py_server O "$HTTP_SERVE"
  start_dns_server
  # names through the test's own name server: a CNAME chain, NXDOMAIN, SERVFAIL, silence
  crun run --allow-domain '*.x.test' --allow-domain 127.0.0.1 --dns-server "127.0.0.1:$DNS_PORT" \
    --network-log "$CT/log" -- sh -c '
    for h in svc.x.test alias.x.test missing.x.test broken.x.test silent.x.test; do
      curl -sS "http://$h:$1/" | head -n 1; echo; done' sh "$O"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  assert_contains "$OUT" "ok GET / host=svc.x.test:$O" "an A record"
  assert_contains "$OUT" "ok GET / host=alias.x.test:$O" "through a CNAME"
  assert_contains "$OUT" "cordon: cannot resolve missing.x.test: the name does not exist (NXDOMAIN)" "NXDOMAIN"
  assert_contains "$OUT" "cordon: cannot resolve broken.x.test: the name server failed (SERVFAIL)" "SERVFAIL"
  assert_contains "$OUT" "cordon: cannot resolve silent.x.test: the name servers did not answer in time" "silence"
  assert_eq "$(json_lines "$CT/log" '[e["decision"] for e in L]')" "['allowed', 'allowed', 'failed', 'failed', 'failed']" "log"
  # the loopback answer through a wildcard, without 127.0.0.1 named: refused, not connected
  crun run --allow-domain '*.x.test' --dns-server "127.0.0.1:$DNS_PORT" -- curl -sS "http://svc.x.test:$O/"
  assert_contains "$OUT" "it resolves to 127.0.0.1, a loopback address" "a wildcard's loopback answer"
  # nor through an exact name: a DNS answer never opens the loopback by itself (rebinding)
  crun run --allow-domain svc.x.test --dns-server "127.0.0.1:$DNS_PORT" -- curl -sS "http://svc.x.test:$O/"
  assert_contains "$OUT" "its DNS answer is 127.0.0.1, a loopback address; a DNS answer never opens such destinations by itself: --allow-domain 127.0.0.1 allows the address, or --add-host svc.x.test=127.0.0.1 pins the name" "an exact name's loopback answer from DNS"
  expect_exit 125 run --allow-domain a.test --dns-server 1.2.3.4:0 -- true
  expect_exit 125 run --allow-domain a.test --dns-server dns.example -- true
  expect_exit 125 run --dns-server 1.1.1.1 -- true
}

# After the run, each host the proxy refused is said once on stderr with the reason and
# the flag that would allow it (issue 23: the command only saw a 403, and only
# --network-log said why); an allowed host is not said, a denied one has no fix.
t_refusals_said_after_run() {
  need_curl
  start_py_server O "$HTTP_SERVE"
  proxied --allow-domain '*.example.test' --deny-domain bad.example.test --add-host loop.example.test=127.0.0.1 -- \
    sh -c 'curl -sS "http://api.test:$1/ok" >/dev/null; for i in 1 2 3; do curl -sS "http://other.test:$1/x" >/dev/null; done
      curl -sS -p "http://evil.test:$1/" >/dev/null 2>&1; curl -sS "http://bad.example.test:$1/" >/dev/null
      curl -sS "http://loop.example.test:$1/" >/dev/null; true' sh "$O"
  [ "$RC" = 0 ] || die "run failed: $(last_run)"
  # the positive control: the allowed request went through, and is not said
  assert_eq "$(json_lines "$CT/log" '[e["host"] for e in L if e["decision"] == "allowed"]')" "['api.test']" "allowed"
  assert_not_contains "$ERR" "refused api.test" "an allowed host is said"
  assert_contains "$ERR" "cordon: network: refused other.test:$O (no --allow-domain matches other.test); to allow it: --allow-domain other.test" \
    "a refused host, its reason and its flag"
  assert_eq "$(printf '%s\n' "$ERR" | grep -c 'refused other.test')" 1 "a host refused three times is said once"
  assert_contains "$ERR" "cordon: network: refused evil.test:$O (no --allow-domain matches evil.test); to allow it: --allow-domain evil.test" "CONNECT"
  assert_contains "$ERR" "cordon: network: refused bad.example.test:$O (refused by --deny-domain bad.example.test)" "denied"
  assert_not_contains "$ERR" "to allow it: --allow-domain bad.example.test" "a denied host has no fix"
  assert_contains "$ERR" "cordon: network: refused loop.example.test:$O (resolves to 127.0.0.1, a loopback address, and is not named exactly by an --allow-domain); to allow it: --allow-domain loop.example.test (or --allow-domain 127.0.0.1)" \
    "a special address"
}

# NO_PROXY takes a host past the proxy silently (issue 23): --allow-domain localhost
# meant the host's localhost through cordon's proxy, but the command's clients skip the
# proxy for localhost (NO_PROXY) and reach the sandbox's own loopback; bridging a host
# proxy, a NO_PROXY host has no way out at all.  Each is a warning; the positive controls
# (a domain NO_PROXY does not name, loopback names when bridging) say nothing.
t_no_proxy_warned() {
  expect_ok run --allow-domain example.test -- true
  assert_not_contains "$ERR" "NO_PROXY" "an allowed domain NO_PROXY does not name"
  expect_ok run --allow-domain localhost -- sh -c 'echo "$NO_PROXY"'
  assert_contains "$OUT" "localhost" "the command's NO_PROXY names localhost"
  assert_contains "$ERR" "cordon: warning: NO_PROXY names localhost, so the command's HTTP clients connect to it directly" \
    "--allow-domain localhost and NO_PROXY"
  assert_contains "$ERR" "--forward-port PORT" "the fix"
  assert_eq "$(printf '%s\n' "$ERR" | grep -c 'names localhost')" 1 "NO_PROXY and no_proxy: said once"
  HTTP_PROXY=http://127.0.0.1:9 crun run --network proxy --keep-env HTTP_PROXY \
    --env NO_PROXY=localhost,127.0.0.1,internal.corp.test -- true
  [ "$RC" = 0 ] || die "bridged run: $(last_run)"
  assert_contains "$ERR" "cordon: warning: NO_PROXY names internal.corp.test: the command's clients connect to it directly" \
    "a bridged proxy and a NO_PROXY host"
  assert_not_contains "$ERR" "names localhost" "loopback names are the sandbox's own when bridging"
  assert_not_contains "$ERR" "names 127.0.0.1"
}

run_case http_allowed_and_refused t_http_allowed_and_refused
run_case connect_and_socks5 t_connect_and_socks5
run_case refused_connect_body t_refused_connect_body
run_case wildcard_and_deny t_wildcard_and_deny
run_case special_addresses_refused t_special_addresses_refused
run_case env_for_tools t_env_for_tools
run_case bad_patterns t_bad_patterns
run_case malformed_requests t_malformed_requests
run_case proxy_upstream_down t_proxy_upstream_down
run_case explain_network t_explain_network
run_case settings_keys t_settings_keys
run_case resolver t_resolver
run_case refusals_said_after_run t_refusals_said_after_run
run_case no_proxy_warned t_no_proxy_warned
finish
