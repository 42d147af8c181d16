// Run as a user other than root by cgroups-unprivileged.test.ts: what detection finds under a root.
import { detectCgroups } from "../src/driver/local/cgroups.ts";

process.stdout.write(`${JSON.stringify(detectCgroups(process.argv[2]))}\n`);
