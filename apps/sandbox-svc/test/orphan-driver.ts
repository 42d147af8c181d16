// A service process with one sandbox behind the egress proxy, for the test that kills it: prints
// the sandbox id once it runs, then waits to be killed.
import { silentLogger } from "@agentplane/service-kit";
import { EgressProxy } from "../src/egress/proxy.ts";
import { newDriver } from "./helpers.ts";

const id = process.argv[2] as string;
const proxy = new EgressProxy({ logger: silentLogger(), decide: async () => ({ allowed: true }) });
const driver = newDriver({ egress: proxy });
await driver.start({ id, slug: "orphan-box", image: "default", env: {}, resources: {} });
process.stdout.write(`${id}\n`);
setInterval(() => {}, 60_000);
