// A service process with one sandbox behind the egress proxy, for the test that kills it: prints
// the sandbox id once it runs, then waits to be killed. Arguments: the sandbox id and its slug.
import { silentLogger } from "@agentplane/service-kit";
import { EgressProxy } from "../src/egress/proxy.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { newDriver } from "./helpers.ts";

const id = process.argv[2] as string;
const slug = process.argv[3] as string;
const proxy = new EgressProxy({ logger: silentLogger(), decide: async () => ({ allowed: true }) });
const driver = newDriver({ egress: proxy });
await driver.start({ id, slug, image: "default", env: {}, resources: {} });
// The start answers before the egress relay listens (decision 0020); an exec waits for it, so the
// relay runs by the time the test looks for it.
await runCommand(driver, id, { argv: ["true"], timeoutMs: 30_000 });
process.stdout.write(`${id}\n`);
setInterval(() => {}, 60_000);
