// `pragma-monitor silence add|ls|expire`: argument parsing (tables), and the commands against an in-process API.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SILENCE_COMMANDS, runSilence, silenceUsage } from "../../src/cli/silence.js";
import { synopsis } from "../../src/cli/usage.js";
import { parseDurationMs, parseSilenceArgs, type SilenceParse } from "../../src/cli/silence-args.js";
import type { GettableSilence } from "../../src/cli/silence-api.js";
import { formatSilenceTable } from "../../src/cli/silence-format.js";

const NOW_MS = Date.parse("2026-11-26T10:00:00Z");
const ENV = { USER: "ana" };
const BTC = { name: "pair", value: "BTC/USD", isRegex: false, isEqual: true };
const PRICE = { name: "rule", value: "price_.*", isRegex: true, isEqual: true };

describe("usage", () => {
  /** A value each string flag accepts, to drive the parser with every flag its usage shows. */
  const SAMPLE: Readonly<Record<string, string>> = {
    for: "2h",
    start: "2026-11-26T10:00:00Z",
    comment: "c",
    author: "a",
    url: "http://127.0.0.1:1",
    token: "t",
  };
  it.each(SILENCE_COMMANDS.map((command) => [command.name, command] as const))(
    "%s accepts every flag its usage shows",
    (name, { synopsisName, flags }) => {
      const shown = [...synopsis(synopsisName, flags).matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!);
      expect(shown).toEqual(Object.keys(flags).filter((flag) => flag !== "help"));
      const argv = shown
        .filter((flag) => flag !== "until") // --until replaces --for
        .flatMap((flag) =>
          flags[flag as keyof typeof flags].type === "string" ? [`--${flag}`, SAMPLE[flag]!] : [`--${flag}`],
        );
      const positionals = name === "silence add" ? ["pair=BTC/USD"] : name === "silence expire" ? ["id"] : [];
      expect(parseSilenceArgs([name.split(" ")[1]!, ...positionals, ...argv], {}, NOW_MS)).toMatchObject({
        ok: true,
      });
    },
  );

  it("documents the defaults, the matcher syntax and the exit codes", () => {
    const usage = silenceUsage(null);
    expect(usage).toContain("(default 1h)");
    expect(usage).toContain("(default http://127.0.0.1:8787)");
    expect(usage).toContain("name=~regex");
    expect(usage).toMatch(/Exit codes: 0 ok, 64 .*65 .*69 .*77 token refused/s);
    expect(silenceUsage("ls")).not.toContain("--comment");
  });
});

describe("parseDurationMs", () => {
  it.each([
    ["45s", 45_000],
    ["90m", 5_400_000],
    ["2h", 7_200_000],
    ["1h30m", 5_400_000],
    ["1d12h", 129_600_000],
    ["1w", 604_800_000],
    ["0h", null],
    ["2", null],
    ["2 h", null],
    ["-1h", null],
    ["1.5h", null],
    ["", null],
  ])("%j → %j", (text, durationMs) => {
    expect(parseDurationMs(text)).toBe(durationMs);
  });
});

describe("parseSilenceArgs", () => {
  const parse = (...argv: string[]): SilenceParse => parseSilenceArgs(argv, ENV, NOW_MS);
  const connection = { url: "http://127.0.0.1:8787", token: "" };

  it.each<[string, string[], object]>([
    [
      "add with defaults: from now, 1h, $USER",
      ["add", "pair=BTC/USD", "rule=~price_.*", "--comment", "exchange maintenance"],
      {
        kind: "add",
        connection,
        silence: {
          matchers: [BTC, PRICE],
          startsAt: "2026-11-26T10:00:00.000Z",
          endsAt: "2026-11-26T11:00:00.000Z",
          createdBy: "ana",
          comment: "exchange maintenance",
        },
      },
    ],
    [
      "add --for, --author, --url, --token",
      [
        "add",
        "pair=BTC/USD",
        "--for",
        "2h30m",
        "--comment=x",
        "--author",
        "bo",
        "--url",
        "http://h:1/",
        "--token",
        "t",
      ],
      {
        kind: "add",
        connection: { url: "http://h:1", token: "t" },
        silence: { endsAt: "2026-11-26T12:30:00.000Z", createdBy: "bo" },
      },
    ],
    [
      "add --start later with --until: pending",
      [
        "add",
        "pair=BTC/USD",
        "--start",
        "2026-11-27T08:00:00+01:00",
        "--until",
        "2026-11-27T09:00:00Z",
        "--comment",
        "x",
      ],
      { kind: "add", silence: { startsAt: "2026-11-27T07:00:00.000Z", endsAt: "2026-11-27T09:00:00.000Z" } },
    ],
    ["ls", ["ls"], { kind: "ls", connection, all: false, json: false }],
    ["ls --all --json", ["ls", "--all", "--json"], { kind: "ls", all: true, json: true }],
    ["expire several", ["expire", "a1", "maintenance:db"], { kind: "expire", ids: ["a1", "maintenance:db"] }],
    ["help", ["--help"], { kind: "help", subcommand: null }],
    ["a subcommand's help", ["ls", "-h"], { kind: "help", subcommand: "ls" }],
  ])("%s", (_name, argv, command) => {
    expect(parse(...argv)).toMatchObject({ ok: true, command });
  });

  it("takes the token from $PM_SERVER_TOKEN as tail does, --token first", () => {
    const env = { ...ENV, PM_SERVER_TOKEN: "from-env" };
    expect(parseSilenceArgs(["ls"], env, NOW_MS)).toMatchObject({
      command: { connection: { token: "from-env" } },
    });
    expect(parseSilenceArgs(["ls", "--token", "flag"], env, NOW_MS)).toMatchObject({
      command: { connection: { token: "flag" } },
    });
  });

  it.each<[string, string[], string]>([
    ["no subcommand", [], "give a subcommand: add, ls or expire"],
    ["an unknown subcommand", ["mute"], 'unknown subcommand "mute"'],
    ["no matcher", ["add", "--comment", "x"], "give at least one matcher"],
    ["a bad matcher", ["add", "BTC/USD", "--comment", "x"], '"BTC/USD" is not a matcher'],
    ["a bad regex", ["add", "rule=~(", "--comment", "x"], '"rule=~(": not a valid regular expression'],
    [
      "matchers that match everything",
      ["add", "pair=~.*", "--comment", "x"],
      "must not match the empty string",
    ],
    [
      "--for and --until",
      ["add", "pair=X", "--for", "1h", "--until", "2026-11-26T12:00:00Z", "--comment", "x"],
      "not both",
    ],
    [
      "a bad duration",
      ["add", "pair=X", "--for", "2 hours", "--comment", "x"],
      '--for must be a duration such as 30m, 2h or 1d12h, got "2 hours"',
    ],
    [
      "a time without offset",
      ["add", "pair=X", "--until", "2026-11-26T12:00:00", "--comment", "x"],
      "--until must be a date-time with its offset",
    ],
    [
      "an end before the start",
      ["add", "pair=X", "--until", "2026-11-26T09:00:00Z", "--comment", "x"],
      "the end must be after the start",
    ],
    ["no comment", ["add", "pair=X"], "--comment is required"],
    ["a blank comment", ["add", "pair=X", "--comment", "  "], "--comment is required"],
    [
      "a ws:// url",
      ["ls", "--url", "ws://127.0.0.1:8787/ws"],
      "--url must be the daemon's http:// or https:// address (not ws://)",
    ],
    ["an unknown flag", ["ls", "--bogus"], "Unknown option '--bogus'"],
    ["ls with an argument", ["ls", "x"], 'ls takes no arguments, got "x"'],
    ["expire without ids", ["expire"], "give the id of each silence to expire"],
  ])("refuses %s", (_name, argv, message) => {
    const parsed = parse(...argv);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? "" : parsed.message).toContain(message);
  });

  it("needs an author when $USER and $LOGNAME are unset", () => {
    expect(parseSilenceArgs(["add", "pair=X", "--comment", "x"], {}, NOW_MS)).toMatchObject({
      ok: false,
      message: "--author is required ($USER is not set)",
    });
    expect(parseSilenceArgs(["add", "pair=X", "--comment", "x"], { LOGNAME: "cy" }, NOW_MS)).toMatchObject({
      command: { silence: { createdBy: "cy" } },
    });
  });
});

/** A silence as the API lists it. */
const listed = (
  id: string,
  state: GettableSilence["status"]["state"],
  times: [string, string],
): GettableSilence => ({
  id,
  matchers: [BTC, PRICE],
  startsAt: times[0],
  endsAt: times[1],
  updatedAt: times[0],
  createdBy: "ana",
  comment: "exchange maintenance",
  status: { state },
});
const ACTIVE = listed("7c1e-active", "active", ["2026-11-26T09:00:00.000Z", "2026-11-26T12:30:00.000Z"]);
const PENDING = {
  ...listed("maintenance:db", "pending", ["2026-11-28T02:00:00.000Z", "2026-11-28T03:30:00.000Z"]),
  matchers: [{ name: "market", value: "onchain", isRegex: false, isEqual: true }],
  createdBy: "config",
  comment: "weekly\ndatabase upgrade, a comment long enough to be cut at sixty characters in the table",
};
const EXPIRED = listed("0b9d-expired", "expired", ["2026-11-25T08:00:00.000Z", "2026-11-26T07:00:00.000Z"]);

describe("formatSilenceTable", () => {
  it("aligns one row per silence: state, matchers in amtool form, times to the second, what remains", () => {
    expect(formatSilenceTable([ACTIVE, PENDING, EXPIRED], NOW_MS, true).split("\n")).toEqual([
      "ID              STATE    MATCHERS                            STARTS                ENDS                  REMAINING         CREATED BY  COMMENT",
      '7c1e-active     active   {pair="BTC/USD", rule=~"price_.*"}  2026-11-26T09:00:00Z  2026-11-26T12:30:00Z  2h 30m            ana         exchange maintenance',
      'maintenance:db  pending  {market="onchain"}                  2026-11-28T02:00:00Z  2026-11-28T03:30:00Z  starts in 1d 16h  config      weekly database upgrade, a comment long enough to be cut at…',
      '0b9d-expired    expired  {pair="BTC/USD", rule=~"price_.*"}  2026-11-25T08:00:00Z  2026-11-26T07:00:00Z  ended 3h ago      ana         exchange maintenance',
      "",
    ]);
  });

  it("says when there is nothing to list, and strips terminal escapes from what the server sent", () => {
    expect(formatSilenceTable([], NOW_MS, false)).toBe(
      "no active or pending silences (--all also lists expired ones)\n",
    );
    expect(formatSilenceTable([{ ...ACTIVE, comment: "a\u001b[2Jb" }], NOW_MS, false)).toContain("a?[2Jb");
  });
});

/** One request the fake daemon received. */
interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** The fake daemon's answer to a request. */
type Answer = { readonly status: number; readonly body: unknown };

/** An HTTP server on 127.0.0.1, port 0, speaking the silences API's shape: it records requests and answers by `route`. */
async function startFakeApi(route: (request: Received) => Answer): Promise<{
  readonly url: string;
  readonly received: Received[];
  readonly server: Server;
}> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      received.push(request);
      const answer = route(request);
      const text = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
      res.writeHead(answer.status, { "content-type": "application/json" }).end(text);
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { url: `http://127.0.0.1:${port}`, received, server };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve).closeAllConnections())),
  );
});

/** Run the command with captured output at NOW_MS. */
async function silence(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await runSilence(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: ENV,
    nowMs: () => NOW_MS,
  });
  return { code, stdout, stderr };
}

describe("silence add", () => {
  it("POSTs the silence as Alertmanager's body, with the token, and prints the new id alone on stdout", async () => {
    const api = await startFakeApi(() => ({ status: 200, body: { silenceID: "7c1e-new" } }));
    const result = await silence(
      "add",
      "pair=BTC/USD",
      "rule=~price_.*",
      "--for",
      "2h",
      "--comment",
      "exchange maintenance",
      "--url",
      api.url,
      "--token",
      "s3cret",
    );
    expect(result).toEqual({
      code: 0,
      stdout: "7c1e-new\n",
      stderr: 'silence 7c1e-new: {pair="BTC/USD", rule=~"price_.*"} until 2026-11-26T12:00:00Z (2h) by ana\n',
    });
    expect(api.received).toHaveLength(1);
    const [request] = api.received;
    expect(request).toMatchObject({
      method: "POST",
      path: "/api/v1/silences",
      headers: {
        authorization: "Bearer s3cret",
        "content-type": "application/json",
        accept: "application/json",
      },
    });
    expect(JSON.parse(request!.body)).toEqual({
      matchers: [BTC, PRICE],
      startsAt: "2026-11-26T10:00:00.000Z",
      endsAt: "2026-11-26T12:00:00.000Z",
      createdBy: "ana",
      comment: "exchange maintenance",
    });
  });

  it("sends no Authorization header without a token", async () => {
    const api = await startFakeApi(() => ({ status: 200, body: { silenceID: "x" } }));
    await silence("add", "pair=BTC/USD", "--comment", "c", "--url", api.url);
    expect(api.received[0]?.headers["authorization"]).toBeUndefined();
  });

  it("refuses a bad matcher without calling the daemon", async () => {
    const api = await startFakeApi(() => ({ status: 500, body: {} }));
    const result = await silence("add", "pair", "--comment", "c", "--url", api.url);
    expect(result.code).toBe(64);
    expect(result.stderr).toMatch(/^silence add: "pair" is not a matcher/);
    expect(api.received).toEqual([]);
  });

  it.each<[string, Answer, number, string]>([
    [
      "400: the server's message",
      {
        status: 400,
        body: { error: "invalid_request", message: "body.endsAt: must not be before startsAt" },
      },
      64,
      "silence add: the daemon refused: body.endsAt: must not be before startsAt\n",
    ],
    [
      "401: the token",
      { status: 401, body: { error: "unauthorized", message: "a valid bearer token is required" } },
      77,
      "silence add: the daemon at URL refused the token: pass --token or set $PM_SERVER_TOKEN to its server.token\n",
    ],
    [
      "429: too many",
      { status: 429, body: { error: "too_many_silences", message: "at most 1000 silences may be live" } },
      65,
      "silence add: at most 1000 silences may be live\n",
    ],
    [
      "500",
      { status: 500, body: "oops" },
      69,
      "silence add: the daemon at URL failed (HTTP 500): HTTP 500\n",
    ],
    [
      "a 200 that is not the API's",
      { status: 200, body: "<html>" },
      69,
      "silence add: unexpected answer from URL/api/v1/silences (not the silences API's shape)\n",
    ],
    [
      "a 404 from something else on the port",
      { status: 404, body: { error: "not_found", message: "no API route /api/v1/silences" } },
      69,
      "silence add: no silences API at URL (no API route /api/v1/silences): is it pragma-monitor, recent enough to have silences?\n",
    ],
  ])("reports %s", async (_name, answer, code, stderr) => {
    const api = await startFakeApi(() => answer);
    const result = await silence("add", "pair=BTC/USD", "--comment", "c", "--url", api.url);
    expect(result).toEqual({ code, stdout: "", stderr: stderr.replaceAll("URL", api.url) });
  });

  it("says the daemon is not running when the connection is refused (69)", async () => {
    const api = await startFakeApi(() => ({ status: 200, body: {} }));
    await new Promise((resolve) => api.server.close(resolve));
    const result = await silence("add", "pair=BTC/USD", "--comment", "c", "--url", api.url);
    expect(result).toEqual({
      code: 69,
      stdout: "",
      stderr: `silence add: cannot reach ${api.url} (connection refused): is the daemon running at ${api.url}? --url sets where\n`,
    });
  });
});

describe("silence ls", () => {
  const everything = () => ({ status: 200, body: [ACTIVE, PENDING, EXPIRED] });

  it("GETs the list and prints the live silences as a table", async () => {
    const api = await startFakeApi(everything);
    const result = await silence("ls", "--url", api.url);
    expect(api.received.map(({ method, path }) => `${method} ${path}`)).toEqual(["GET /api/v1/silences"]);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n").map((line) => line.split(" ")[0])).toEqual([
      "ID",
      "7c1e-active",
      "maintenance:db",
      "",
    ]);
  });

  it("--all also lists expired ones", async () => {
    const api = await startFakeApi(everything);
    expect((await silence("ls", "--all", "--url", api.url)).stdout).toContain("0b9d-expired    expired");
  });

  it("--json prints the API's objects as received (unknown keys kept), expired ones only with --all", async () => {
    const withExtra = { ...ACTIVE, extra: { kept: true } };
    const api = await startFakeApi(() => ({ status: 200, body: [withExtra, EXPIRED] }));
    expect(JSON.parse((await silence("ls", "--json", "--url", api.url)).stdout)).toEqual([withExtra]);
    expect(JSON.parse((await silence("ls", "--json", "--all", "--url", api.url)).stdout)).toEqual([
      withExtra,
      EXPIRED,
    ]);
  });

  it("reads $PM_SERVER_TOKEN", async () => {
    const api = await startFakeApi(everything);
    await runSilence(["ls", "--url", api.url], {
      stdout: { write: () => true },
      stderr: { write: () => true },
      env: { PM_SERVER_TOKEN: "from-env" },
      nowMs: () => NOW_MS,
    });
    expect(api.received[0]?.headers["authorization"]).toBe("Bearer from-env");
  });
});

describe("silence expire", () => {
  it("DELETEs each id (encoded in the path) and says so", async () => {
    const api = await startFakeApi(() => ({ status: 200, body: {} }));
    const result = await silence("expire", "7c1e-active", "a/b c", "--url", api.url, "--token", "t");
    expect(api.received.map(({ method, path }) => `${method} ${path}`)).toEqual([
      "DELETE /api/v1/silences/7c1e-active",
      "DELETE /api/v1/silences/a%2Fb%20c",
    ]);
    expect(api.received.every((request) => request.headers["authorization"] === "Bearer t")).toBe(true);
    expect(result).toEqual({ code: 0, stdout: "expired 7c1e-active\nexpired a/b c\n", stderr: "" });
  });

  it("goes on after an unknown id, then exits 65 naming it", async () => {
    const api = await startFakeApi(({ path }) =>
      path.endsWith("/nope")
        ? { status: 404, body: { error: "not_found", message: "no silence nope" } }
        : { status: 200, body: {} },
    );
    const result = await silence("expire", "nope", "7c1e-active", "--url", api.url);
    expect(result).toEqual({
      code: 65,
      stdout: "expired 7c1e-active\n",
      stderr: "silence expire: no silence nope\n",
    });
  });

  it("passes on the refusal of a maintenance window (409)", async () => {
    const message = "maintenance:db is a maintenance window from the config: edit the config to change it";
    const api = await startFakeApi(() => ({ status: 409, body: { error: "conflict", message } }));
    expect(await silence("expire", "maintenance:db", "--url", api.url)).toMatchObject({
      code: 65,
      stderr: `silence expire: ${message}\n`,
    });
  });

  it("stops at a refused token (77) and names the ids not tried", async () => {
    const api = await startFakeApi(() => ({
      status: 401,
      body: { error: "unauthorized", message: "token" },
    }));
    const result = await silence("expire", "a", "b", "--url", api.url);
    expect(result.code).toBe(77);
    expect(api.received).toHaveLength(1);
    expect(result.stderr).toContain(`silence expire: not tried at ${api.url}: b`);
  });
});
