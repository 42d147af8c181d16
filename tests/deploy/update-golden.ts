// Rewrites the charts' golden files from the current templates:
//   node scripts/bootstrap.mjs node tests/deploy/update-golden.ts
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  GOLDEN_DIR,
  RELAY_GOLDEN_DIR,
  RELAY_VALUES_DIR,
  renderChart,
  renderRelayChart,
  VALUES_DIR,
  valueSets,
} from "./chart.ts";

for (const name of valueSets()) {
  writeFileSync(join(GOLDEN_DIR, `${name}.yaml`), renderChart(join(VALUES_DIR, `${name}.yaml`)));
  console.log(`golden/${name}.yaml`);
}
for (const name of valueSets(RELAY_VALUES_DIR)) {
  writeFileSync(join(RELAY_GOLDEN_DIR, `${name}.yaml`), renderRelayChart(join(RELAY_VALUES_DIR, `${name}.yaml`)));
  console.log(`golden/relay-chart/${name}.yaml`);
}
