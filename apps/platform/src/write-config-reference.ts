// Writes docs/configuration.md from the deployables' configuration schemas (`npm run docs:config`).
import { writeFileSync } from "node:fs";
import { CONFIG_REFERENCE_PATH, renderConfigReference } from "./config-reference.ts";

writeFileSync(CONFIG_REFERENCE_PATH, renderConfigReference());
process.stdout.write(`wrote ${CONFIG_REFERENCE_PATH}\n`);
