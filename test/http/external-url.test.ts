// The daemon's own base URL for links in alerts: configured, or derived from the listening socket.
import { describe, expect, it } from "vitest";
import { alertLink, externalBaseUrl } from "../../src/http/external-url.js";

describe("externalBaseUrl", () => {
  it.each([
    [
      "configured, trailing slash dropped",
      { externalUrl: "https://pm.example/mon/", host: "127.0.0.1" },
      "https://pm.example/mon",
    ],
    ["loopback bind", { externalUrl: "", host: "127.0.0.1" }, "http://127.0.0.1:8787"],
    ["wildcard bind named by the machine", { externalUrl: "", host: "0.0.0.0" }, "http://box-1:8787"],
    ["IPv6 bind in brackets", { externalUrl: "", host: "::1" }, "http://[::1]:8787"],
  ])("%s", (_name, server, expected) => {
    expect(externalBaseUrl(server, 8787, "box-1")).toBe(expected);
  });

  it("links an alert by fingerprint under the operator API path", () => {
    expect(alertLink("http://127.0.0.1:8787", "9f2c41d0a7b3e6f1")).toBe(
      "http://127.0.0.1:8787/api/v1/alerts?fingerprint=9f2c41d0a7b3e6f1",
    );
  });
});
