// Child of the pipeline-counts bench, run under cachegrind: warm up, then `rounds` passes of one job over the pipeline bench's workload.
import { pipelineWorkload, timeParse, timePipeline } from "./pipeline-bench.js";

const [job = "pipeline", rounds = "1", warmups = "4", targets = "500", seconds = "40"] =
  process.argv.slice(2);
const { specs, rules, bodies } = pipelineWorkload(Number(targets), Number(seconds));
const pass = (which: string): void => {
  if (which === "parse") timeParse(bodies);
  else timePipeline(bodies, specs, rules, false);
};
// Both jobs warm up in every child, so the children differ only in the measured passes.
for (let i = 0; i < Number(warmups); i++) {
  pass("parse");
  pass("pipeline");
}
for (let i = 0; i < Number(rounds); i++) pass(job);
