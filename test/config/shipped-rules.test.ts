// The shipped demo rules through the alert engine: a move hovering at the threshold fires and resolves once.
import { expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { packageRoot } from "../../src/config/package-root.js";
import { createMonitorState, observe } from "../../src/domain/monitor.js";
import { ETH_OFF, T0, obs, pairPrice } from "../domain/helpers.js";

it("config/default.json: ETH/USD hovering at the 10 s rule's 2 % fires once and resolves once (it flapped 3 times in 8 s)", () => {
  const { config } = loadConfig({ env: {}, cwd: packageRoot() });
  const rules = config.rules.filter((r) => r.id === "price_change_10s");
  expect(rules).toHaveLength(1);
  const state = createMonitorState();
  const prices: number[] = [];
  const statuses: string[] = [];
  for (let s = 0; s < 60; s++) {
    // 10 s moves alternate 2.05 % / 1.95 % from 10 s to 40 s (the drift), then 0.5 %
    const move = s < 10 ? 0 : s < 40 ? (s % 2 === 0 ? 0.0205 : 0.0195) : 0.005;
    const price = s < 10 ? 100 : prices[s - 10]! * (1 + move);
    prices.push(price);
    const atMs = T0 + s * 1_000;
    const observation = obs.off(pairPrice(price.toFixed(8), atMs), atMs, ETH_OFF);
    for (const t of observe(state, observation, rules, atMs).transitions) statuses.push(t.status);
  }
  expect(statuses).toEqual(["firing", "resolved"]);
});
