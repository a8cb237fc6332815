// The one helper that makes a URL safe to log: userinfo secrets and credential query parameters redacted.
import { describe, expect, it } from "vitest";
import { redactUrl } from "../../src/config/redact.js";

describe("redactUrl", () => {
  it.each([
    ["http://user:pass@127.0.0.1:3000", "http://user:[redacted]@127.0.0.1:3000/"],
    ["https://user:p%40ss@api.example.com/v1?x=1", "https://user:[redacted]@api.example.com/v1?x=1"],
    ["https://ghp_token@api.example.com/", "https://[redacted]@api.example.com/"],
    ["http://127.0.0.1:8787/ws?token=s3cret&x=1", "http://127.0.0.1:8787/ws?token=[redacted]&x=1"],
    ["/ws?token=s3cret", "/ws?token=[redacted]"],
    ["/metrics?apiKey=k", "/metrics?apiKey=[redacted]"],
    // nothing secret: returned exactly as given
    ["http://127.0.0.1:3000", "http://127.0.0.1:3000"],
    ["/metrics?x=1", "/metrics?x=1"],
    ["simulator", "simulator"],
    ["", ""],
  ])("%s → %s", (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});
