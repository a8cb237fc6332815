// Public surface of the embedded Pragma API simulator.
export { startSimulator, type RunningSimulator, type SimulatorOptions } from "./server.js";
export { createSystemClock, createManualClock, type SimClock, type ManualClock } from "./clock.js";
export { createMarket, TICK_MS, type Market, type MarketOptions } from "./market.js";
export {
  parseScenario,
  parseFault,
  loadScenarioFile,
  resolveScenario,
  DEMO_SCENARIO,
  type Scenario,
  type ScenarioFault,
} from "./scenario.js";
export type { Fault, FaultKind, EndpointKind } from "./faults.js";
export type { SimulatorControl, SimState, InjectOptions, FaultState } from "./control.js";
export { runSimulateCommand, type CommandIo } from "./cli.js";
