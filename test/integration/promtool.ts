// Runs Prometheus' promtool (Debian package `prometheus`) from tests; missing promtool skips locally and fails in CI.
import { spawnSync } from "node:child_process";

/** Whether `promtool` is on PATH. */
export const PROMTOOL_INSTALLED = spawnSync("promtool", ["--version"], { stdio: "ignore" }).status === 0;

/** CI sets `CI` (GitHub Actions, GitLab, .ci/run): there a missing promtool is a failure, not a skip. */
const IN_CI = (process.env["CI"] ?? "") !== "" && process.env["CI"] !== "false";

/** Skip a promtool test only on a developer machine without promtool; in CI the test runs and fails. */
export const SKIP_WITHOUT_PROMTOOL = !PROMTOOL_INSTALLED && !IN_CI;

/** What promtool printed and how it exited. */
export interface PromtoolResult {
  readonly status: number | null;
  readonly output: string;
}

/** Run `promtool ...args` (with `input` on stdin, in `cwd`); throws a clear error when promtool is missing. */
export function promtool(
  args: readonly string[],
  options: { readonly input?: string; readonly cwd?: string } = {},
): PromtoolResult {
  const { input, cwd } = options;
  if (!PROMTOOL_INSTALLED)
    throw new Error(
      "promtool is not installed but CI is set: install it (Debian: apt-get install prometheus)",
    );
  const result = spawnSync("promtool", args, {
    encoding: "utf8",
    timeout: 30_000,
    ...(input === undefined ? {} : { input }),
    ...(cwd === undefined ? {} : { cwd }),
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
