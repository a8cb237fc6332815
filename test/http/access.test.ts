// Table tests of the Host and Origin rules (DNS rebinding, cross-site WebSocket hijacking).
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { hostName, isLoopbackHost, normaliseOrigin } from "../../src/config/hosts.js";
import { createAccessPolicy, type AccessConfig, type AccessRefusal } from "../../src/http/access.js";

const request = (headers: Record<string, string>): IncomingMessage =>
  ({
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
  }) as IncomingMessage;

const LOOPBACK: AccessConfig = { host: "127.0.0.1", allowedHosts: [], allowedOrigins: [] };
const PUBLIC: AccessConfig = { host: "0.0.0.0", allowedHosts: [], allowedOrigins: [] };

describe("access policy", () => {
  it.each<[string, AccessConfig, Record<string, string>, AccessRefusal]>([
    // non-browser clients send no Origin: always allowed on a good Host
    ["cli on loopback", LOOPBACK, { Host: "127.0.0.1:8787" }, null],
    ["cli via localhost", LOOPBACK, { Host: "localhost:8787" }, null],
    ["cli via [::1]", LOOPBACK, { Host: "[::1]:8787" }, null],
    ["HTTP/1.0 without Host", LOOPBACK, {}, null],
    // the attack: foreign Origin and a rebinding Host
    ["rebinding Host", LOOPBACK, { Host: "rebind.evil.example:8787" }, "host"],
    [
      "rebinding Host + evil Origin",
      LOOPBACK,
      { Host: "rebind.evil.example:8787", Origin: "http://evil.example" },
      "host",
    ],
    ["loopback-looking name", LOOPBACK, { Host: "127.0.0.1.nip.evil:8787" }, "host"],
    [
      "evil Origin on a good Host",
      LOOPBACK,
      { Host: "127.0.0.1:8787", Origin: "http://evil.example" },
      "origin",
    ],
    [
      "another local port is another origin",
      LOOPBACK,
      { Host: "127.0.0.1:8787", Origin: "http://127.0.0.1:3000" },
      "origin",
    ],
    [
      "localhost page to a 127.0.0.1 Host",
      LOOPBACK,
      { Host: "127.0.0.1:8787", Origin: "http://localhost:8787" },
      "origin",
    ],
    [
      '"null" Origin (sandboxed frame, file://)',
      LOOPBACK,
      { Host: "127.0.0.1:8787", Origin: "null" },
      "origin",
    ],
    ["own origin", LOOPBACK, { Host: "127.0.0.1:8787", Origin: "http://127.0.0.1:8787" }, null],
    [
      "own origin, case and default port",
      LOOPBACK,
      { Host: "LocalHost", Origin: "http://localhost:80" },
      null,
    ],
    [
      "own origin behind a TLS proxy",
      { ...LOOPBACK, allowedHosts: ["mon.example.com"] },
      { Host: "mon.example.com", Origin: "https://mon.example.com" },
      null,
    ],
    [
      "listed host",
      { ...LOOPBACK, allowedHosts: ["mon.example.com"] },
      { Host: "MON.example.com:8787" },
      null,
    ],
    ["listed suffix", { ...LOOPBACK, allowedHosts: [".example.com"] }, { Host: "a.b.example.com" }, null],
    [
      "listed suffix is not a substring",
      { ...LOOPBACK, allowedHosts: [".example.com"] },
      { Host: "evilexample.com" },
      "host",
    ],
    ["any host", { ...LOOPBACK, allowedHosts: ["*"] }, { Host: "whatever" }, null],
    [
      "listed origin",
      { ...LOOPBACK, allowedOrigins: ["https://dash.example.com/"] },
      { Host: "127.0.0.1:8787", Origin: "https://dash.example.com" },
      null,
    ],
    [
      "listed origin, other scheme",
      { ...LOOPBACK, allowedOrigins: ["https://dash.example.com"] },
      { Host: "127.0.0.1:8787", Origin: "http://dash.example.com" },
      "origin",
    ],
    [
      "any origin",
      { ...LOOPBACK, allowedOrigins: ["*"] },
      { Host: "127.0.0.1:8787", Origin: "http://evil.example" },
      null,
    ],
    // bound to a public address: Host unchecked unless listed, Origin always checked
    ["public bind, any Host", PUBLIC, { Host: "10.0.0.5:8787" }, null],
    ["public bind, own origin", PUBLIC, { Host: "10.0.0.5:8787", Origin: "http://10.0.0.5:8787" }, null],
    ["public bind, evil Origin", PUBLIC, { Host: "10.0.0.5:8787", Origin: "http://evil.example" }, "origin"],
    [
      "public bind, a rebinding name is not its own origin",
      PUBLIC,
      { Host: "evil.example:8787", Origin: "http://evil.example:8787" },
      "origin",
    ],
    [
      "public bind, IPv6 literal own origin",
      PUBLIC,
      { Host: "[fd00::5]:8787", Origin: "http://[fd00::5]:8787" },
      null,
    ],
    [
      "public bind, listed name is its own origin",
      { ...PUBLIC, allowedHosts: ["mon.example.com"] },
      { Host: "mon.example.com:8787", Origin: "http://mon.example.com:8787" },
      null,
    ],
    [
      "public bind, any host: every name is its own origin",
      { ...PUBLIC, allowedHosts: ["*"] },
      { Host: "mon.example.com", Origin: "https://mon.example.com" },
      null,
    ],
    [
      "public bind with allowedHosts",
      { ...PUBLIC, allowedHosts: ["mon.example.com"] },
      { Host: "10.0.0.5:8787" },
      "host",
    ],
    [
      "public bind with allowedHosts, loopback name",
      { ...PUBLIC, allowedHosts: ["mon.example.com"] },
      { Host: "localhost:8787" },
      null,
    ],
  ])("%s", (_name, config, headers, verdict) => {
    expect(createAccessPolicy(config).check(request(headers))).toBe(verdict);
  });

  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["[::1]", true],
    ["localhost", true],
    ["app.localhost", true],
    ["0.0.0.0", false],
    ["::", false],
    ["10.0.0.5", false],
    ["127.0.0.1.evil", false],
  ])("isLoopbackHost(%s) = %s", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it.each([
    ["localhost:8787", "localhost"],
    ["[::1]:8787", "[::1]"],
    ["[::1]", "[::1]"],
    ["Example.COM", "example.com"],
  ])("hostName(%s) = %s", (header, name) => {
    expect(hostName(header)).toBe(name);
  });

  it.each([
    ["https://dash.example.com", "https://dash.example.com"],
    ["HTTPS://Dash.Example.com:443/", "https://dash.example.com"],
    ["http://127.0.0.1:3000", "http://127.0.0.1:3000"],
    ["*", "*"],
    ["https://dash.example.com/path", null],
    ["dash.example.com", null],
    ["ftp://x", null],
    ["null", null],
  ])("normaliseOrigin(%s) = %s", (entry, origin) => {
    expect(normaliseOrigin(entry)).toBe(origin);
  });
});
