// Rewrites the chart's golden files from the current templates:
//   node scripts/bootstrap.mjs node tests/deploy/update-golden.ts
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { GOLDEN_DIR, renderChart, VALUES_DIR, valueSets } from "./chart.ts";

for (const name of valueSets()) {
  writeFileSync(join(GOLDEN_DIR, `${name}.yaml`), renderChart(join(VALUES_DIR, `${name}.yaml`)));
  console.log(`golden/${name}.yaml`);
}
